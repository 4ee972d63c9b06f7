import pytest

from commscope.system.errors import UserError
from commscope.system.sizes import format_bytes, parse_sizes


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("0", [0]),
        ("8", [8]),
        ("8B", [8]),
        ("1K", [1024]),
        ("1KiB", [1024]),
        ("64KiB", [65536]),
        ("2M", [2097152]),
        ("2MiB", [2097152]),
        ("1G", [1073741824]),
        ("1GiB", [1073741824]),
        ("1T", [1099511627776]),
        ("1TiB", [1099511627776]),
        ("4kB", [4000]),
        ("1MB", [1000000]),
        ("2GB", [2000000000]),
        ("1TB", [1000000000000]),
        ("1.5K", [1536]),
        ("0.5KiB", [512]),
        ("2.5kB", [2500]),
        ("4 KiB", [4096]),
    ],
)
def test_single_sizes(spec, expected):
    assert parse_sizes(spec) == expected


def test_list_is_sorted_and_deduplicated_with_whitespace():
    assert parse_sizes(" 64KiB , 8,1K, 1024 ,8 ") == [8, 1024, 65536]


def test_range_from_zero_includes_zero_and_every_power_of_two():
    sizes = parse_sizes("0:4MiB")
    assert sizes[:5] == [0, 1, 2, 4, 8]
    assert sizes[-1] == 4194304
    assert len(sizes) == 1 + 23  # 0, then 2**0 .. 2**22
    assert sizes == [0] + [2**i for i in range(23)]


def test_range_from_power_of_two():
    assert parse_sizes("1K:8K") == [1024, 2048, 4096, 8192]


def test_degenerate_ranges():
    assert parse_sizes("0:0") == [0]
    assert parse_sizes("16:16") == [16]
    assert parse_sizes("0:1") == [0, 1]


def test_range_and_list_merge():
    assert parse_sizes("1:4, 3, 4, 0 : 2") == [0, 1, 2, 3, 4]


def test_custom_flag_is_named_in_errors():
    with pytest.raises(UserError, match=r"^sweep\.toml sizes: '4QB' is not a size"):
        parse_sizes("4QB", flag="sweep.toml sizes")


def test_unknown_unit_message_in_full():
    with pytest.raises(UserError) as info:
        parse_sizes("8,4QB")
    assert str(info.value) == (
        "--sizes: '4QB' is not a size; use bytes with an optional unit "
        "(B, K/KiB, M/MiB, G/GiB, T/TiB, kB, MB, GB, TB), a list (8,1K,64KiB) "
        "or a power-of-two range (0:4MiB)"
    )
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "bad",
    [
        "4k",
        "4m",
        "4g",
        "4KIB",
        "4kib",
        "4Kb",
        "4kb",
        "4mB",
        "1e6",
        "K",
        "4 K B",
        "0x10",
        "4.K",
        ".5K",
    ],
)
def test_strict_units_and_numbers(bad):
    with pytest.raises(UserError, match=rf"^--sizes: '{bad}' is not a size; use bytes"):
        parse_sizes(bad)


def test_uppercase_kb_is_ambiguous():
    with pytest.raises(UserError) as info:
        parse_sizes("4KB")
    assert str(info.value) == (
        "--sizes: '4KB' is ambiguous; write KiB (1024 bytes) or kB (1000 bytes)"
    )


def test_negative_size():
    with pytest.raises(UserError) as info:
        parse_sizes("8,-4")
    assert str(info.value) == "--sizes: '-4' is negative; sizes are byte counts >= 0"


def test_fraction_must_give_whole_bytes():
    with pytest.raises(UserError) as info:
        parse_sizes("1.3K")
    assert str(info.value) == "--sizes: '1.3K' is 1331.2 bytes, not a whole number of bytes"
    with pytest.raises(UserError, match="not a whole number of bytes"):
        parse_sizes("1.5")


@pytest.mark.parametrize("spec", ["", "   "])
def test_empty_spec(spec):
    with pytest.raises(UserError, match=r"^--sizes: no sizes given; use bytes"):
        parse_sizes(spec)


@pytest.mark.parametrize("spec", ["8,,16", "8,", ",8"])
def test_empty_item(spec):
    with pytest.raises(UserError, match=rf"^--sizes: empty item in '{spec}'"):
        parse_sizes(spec)


def test_range_end_below_start():
    with pytest.raises(UserError) as info:
        parse_sizes("64:8")
    assert str(info.value) == (
        "--sizes: range '64:8' ends below its start; write LO:HI with LO <= HI"
    )


@pytest.mark.parametrize("spec, end", [("3:64", 3), ("0:1000", 1000), ("1:1MB", 1000000)])
def test_range_ends_must_be_zero_or_power_of_two(spec, end):
    with pytest.raises(UserError) as info:
        parse_sizes(spec)
    assert str(info.value).startswith(
        f"--sizes: range '{spec}' has an end of {end} bytes; "
        "range ends must be 0 or a power of two"
    )


@pytest.mark.parametrize("spec", ["1:2:4", "1:", ":8", ":"])
def test_malformed_range(spec):
    with pytest.raises(UserError, match=rf"^--sizes: '{spec}' is not a range; use bytes"):
        parse_sizes(spec)


def test_bad_size_inside_range_is_named():
    with pytest.raises(UserError, match=r"^--sizes: '4QB' is not a size"):
        parse_sizes("0:4QB")


@pytest.mark.parametrize(
    "nbytes, text",
    [
        (0, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1536 B"),
        (3072, "3 KiB"),
        (65536, "64 KiB"),
        (1000000, "1000000 B"),  # 10**6 = 2**6 * 15625: not a multiple of 1024
        (4194304, "4 MiB"),
        (1073741824, "1 GiB"),
        (2147487744, "2097156 KiB"),  # 2 GiB + 4 KiB
        (3 * 1024**4, "3 TiB"),
        (1024**5, "1024 TiB"),
    ],
)
def test_format_bytes(nbytes, text):
    assert format_bytes(nbytes) == text


def test_format_bytes_rejects_negative():
    with pytest.raises(ValueError):
        format_bytes(-1)


def test_format_bytes_output_parses_back():
    for nbytes in [0, 1, 1536, 4096, 2147487744, 3 * 1024**4]:
        assert parse_sizes(format_bytes(nbytes)) == [nbytes]
