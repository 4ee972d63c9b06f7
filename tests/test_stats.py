import math

import numpy as np
import pytest

from commscope.stats.stats import (Summary, median_ci, median_ci_ranks, outlier_mask, percentile,
                                   summarize)

ONE_TO_TEN = [7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 6.0, 4.0]  # 1..10 shuffled


# Ranks (j, n + 1 - j) of the 95% median CI, worked out with the exact
# binomial, B ~ Binom(n, 1/2), j the largest rank with P(B <= j - 1) <= 0.025:
#   n=6:  P(B<=0) = 1/64 = 0.0156;             P(B<=1) = 7/64 = 0.109
#   n=9:  P(B<=1) = 10/512 = 0.0195;           P(B<=2) = 46/512 = 0.0898
#   n=10: P(B<=1) = 11/1024 = 0.0107;          P(B<=2) = 56/1024 = 0.0547
#   n=12: P(B<=2) = 79/4096 = 0.0193;          P(B<=3) = 299/4096 = 0.0730
#   n=20: P(B<=5) = 21700/2^20 = 0.0207;       P(B<=6) = 0.0577
#   n=50: P(B<=17) = 0.0164;                   P(B<=18) = 0.0325
#   n=70: P(B<=26) = 0.0207;                   P(B<=27) = 0.0361
#   n=71: P(B<=26) = 0.0160;                   P(B<=27) = 0.0284
# These match Le Boudec 2010, Table A.1.
@pytest.mark.parametrize(
    "n, ranks",
    [
        (6, (1, 6)),
        (7, (1, 7)),
        (9, (2, 8)),
        (10, (2, 9)),
        (12, (3, 10)),
        (20, (6, 15)),
        (50, (18, 33)),
        (70, (27, 44)),
        (71, (27, 45)),
        (100, (40, 61)),
        (1000, (469, 532)),  # last exact n
    ],
)
def test_median_ci_ranks_exact_at_95(n, ranks):
    assert median_ci_ranks(n) == ranks


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_median_ci_ranks_none_below_six_at_95(n):
    # n=5: P(B<=0) = 1/32 = 0.03125 > 0.025, so even [x(1), x(5)] is short of 95%.
    assert median_ci_ranks(n) is None


def test_median_ci_ranks_other_confidence():
    # 99%: need P(B<=j-1) <= 0.005. n=7: 1/128 = 0.0078 (no); n=8: 1/256 = 0.0039.
    assert median_ci_ranks(7, 0.99) is None
    assert median_ci_ranks(8, 0.99) == (1, 8)
    # n=10 at 99%: P(B<=0) = 0.00098 <= 0.005 < P(B<=1) = 0.0107.
    assert median_ci_ranks(10, 0.99) == (1, 10)
    # n=10 at 50%: need <= 0.25; P(B<=3) = 176/1024 = 0.172, P(B<=4) = 386/1024 = 0.377.
    assert median_ci_ranks(10, 0.5) == (4, 7)


def test_median_ci_ranks_boundary_is_inclusive():
    # n=2 at 50%: P(B<=0) = 1/4 equals (1 - 0.5) / 2 exactly, so j = 1 qualifies.
    assert median_ci_ranks(2, 0.5) == (1, 2)


def test_median_ci_ranks_normal_approximation_above_1000():
    # Le Boudec: j = floor(n/2 - 0.98 sqrt(n)), k = ceil(n/2 + 1 + 0.98 sqrt(n)).
    # n=1001: 500.5 - 0.98 * 31.6386 = 469.49 -> 469; 501.5 + 31.0058 = 532.51 -> 533.
    assert median_ci_ranks(1001) == (469, 533)
    # n=10^6: 500000 - 980 = 499020; 500001 + 980 = 500981.
    assert median_ci_ranks(10**6) == (499020, 500981)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.1, 95])
def test_median_ci_ranks_rejects_bad_confidence(confidence):
    with pytest.raises(ValueError, match="confidence"):
        median_ci_ranks(10, confidence)


def test_median_ci_values_for_one_to_ten():
    assert median_ci(ONE_TO_TEN) == (2.0, 9.0)


def test_median_ci_presorted_matches_sorting():
    rng = np.random.default_rng(7)
    samples = rng.lognormal(mean=-11, sigma=0.3, size=71)
    ordered = np.sort(samples)
    assert median_ci(ordered, presorted=True) == median_ci(samples)
    assert median_ci(samples) == (ordered[26], ordered[44])  # x(27), x(45)


def test_median_ci_none_below_six():
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) == (1.0, 6.0)


@pytest.mark.parametrize(
    "p, expected",
    [
        (0, 1.0),
        (5, 1.45),  # rank 0.05 * 9 = 0.45 -> 1 + 0.45 * (2 - 1)
        (25, 3.25),  # rank 2.25 -> 3 + 0.25
        (50, 5.5),
        (95, 9.55),  # rank 8.55 -> 9 + 0.55
        (100, 10.0),
    ],
)
def test_percentile_linear_interpolation(p, expected):
    assert percentile(ONE_TO_TEN, p) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("p", [-1, 100.5])
def test_percentile_rejects_out_of_range(p):
    with pytest.raises(ValueError, match="percentile"):
        percentile(ONE_TO_TEN, p)


def test_summarize_one_to_ten():
    s = summarize(ONE_TO_TEN)
    assert isinstance(s, Summary)
    assert s.n == 10
    assert s.median == 5.5
    assert (s.ci_low, s.ci_high) == (2.0, 9.0)
    assert s.p05 == pytest.approx(1.45)
    assert s.p95 == pytest.approx(9.55)
    assert s.mean == 5.5
    # sum of squared deviations = 2 * (4.5^2 + 3.5^2 + 2.5^2 + 1.5^2 + 0.5^2) = 82.5
    assert s.stddev == pytest.approx(math.sqrt(82.5 / 9))
    assert s.stddev == pytest.approx(3.0276503540974917)
    assert s.cv == pytest.approx(3.0276503540974917 / 5.5)
    assert (s.min, s.max) == (1.0, 10.0)
    # MAD = 2.5; largest modified z = 0.6745 * 4.5 / 2.5 = 1.21: no outliers.
    assert s.outliers == 0
    assert s.outlier_indices == ()


def test_summarize_small_samples():
    s = summarize([3.0, 1.0, 2.0, 5.0, 4.0])
    assert s.median == 3.0
    assert s.ci_low is None and s.ci_high is None
    assert s.stddev == pytest.approx(math.sqrt(2.5))

    one = summarize([7e-6])
    assert (one.n, one.median, one.min, one.max, one.mean) == (1, 7e-6, 7e-6, 7e-6, 7e-6)
    assert one.stddev is None and one.cv is None
    assert one.ci_low is None
    assert one.p05 == one.p95 == 7e-6
    assert one.outliers == 0


def test_summarize_cv_none_when_mean_is_zero():
    assert summarize([-1.0, 1.0]).cv is None


def test_summarize_flags_one_clear_outlier_and_keeps_it():
    samples = [10.0, 12.0, 11.0, 10.0, 13.0, 11.0, 12.0, 10.0, 11.0, 50.0]
    s = summarize(samples)
    # median 11; |x - 11| = 1,1,0,1,2,0,1,1,0,39 -> MAD 1; z(50) = 0.6745 * 39 = 26.3,
    # z(13) = 1.35.
    assert s.outliers == 1
    assert s.outlier_indices == (9,)
    assert s.n == 10  # never dropped
    assert s.max == 50.0
    assert s.mean == pytest.approx(150.0 / 10)


def test_outlier_threshold_between_16_and_17():
    samples = [9.0, 10.0, 10.0, 11.0, 11.0, 11.0, 12.0, 12.0, 13.0, 16.0, 17.0]
    # median 11, MAD 1: z(16) = 0.6745 * 5 = 3.37 (kept), z(17) = 0.6745 * 6 = 4.05 (flagged).
    assert outlier_mask(samples).tolist() == [False] * 10 + [True]
    assert summarize(samples).outlier_indices == (10,)


def test_outliers_when_mad_is_zero_use_mean_absolute_deviation():
    # Coarse timer: 7 of 11 samples equal the median (1), so MAD = 0.
    # MeanAD = (3 * 1 + 99) / 11 = 9.27; z = |x - 1| / (1.2533 * 9.27):
    # z(2) = 0.086 (kept), z(100) = 8.52 (flagged).
    samples = [1.0] * 7 + [2.0] * 3 + [100.0]
    assert summarize(samples).outlier_indices == (10,)
    # Without the spike: MeanAD = 0.3, z(2) = 1 / (1.2533 * 0.3) = 2.66: nothing flagged.
    assert summarize([1.0] * 7 + [2.0] * 3).outliers == 0


def test_no_outliers_when_all_equal():
    s = summarize([4.2e-6] * 20)
    assert s.outliers == 0
    assert (s.median, s.min, s.max, s.ci_low) == (4.2e-6,) * 4
    assert s.stddev == pytest.approx(0.0, abs=1e-18)  # the mean is off by rounding only


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [1.0, float("inf")], [[1.0, 2.0]]])
def test_summarize_rejects_unusable_samples(bad):
    with pytest.raises(ValueError, match="samples"):
        summarize(bad)


def test_summarize_million_samples():
    rng = np.random.default_rng(2010)
    samples = rng.lognormal(mean=math.log(2e-6), sigma=0.25, size=10**6)
    samples[123456] = 1.0  # one absurd stall
    s = summarize(samples)
    ordered = np.sort(samples)
    assert s.n == 10**6
    assert s.median == np.median(samples)
    # Ranks from Le Boudec's normal approximation: 499020 and 500981 (1-based).
    assert (s.ci_low, s.ci_high) == (ordered[499019], ordered[500980])
    assert s.ci_low < s.median < s.ci_high
    assert s.p05 == pytest.approx(np.percentile(samples, 5))
    assert s.median == pytest.approx(2e-6, rel=0.01)
    assert 123456 in s.outlier_indices
    assert s.max == 1.0
