"""docs/architecture.md describes the house as it is: every path it names exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "commscope"
# A path as the page writes one: in backticks, with a folder or a file's extension;
# Python's are under src/commscope/, the rest from the repository's root.
PATH = re.compile(r"`([A-Za-z0-9_./-]+(?:/|\.(?:py|c|h|md|json|lock|toml)))`")


PLACEHOLDER = re.compile(r"\b[A-Z]{2,}\b")  # cli/VERB.py, native/kernels/NAME.c


def named_paths(text: str) -> list[str]:
    return [p for p in PATH.findall(text)
            if not p.startswith("../") and not PLACEHOLDER.search(p)]


def exists(path: str) -> bool:
    """Under the package, the root, docs/, native/ (a C file by its name) or tests/."""
    return any((base / path).exists()
               for base in (PACKAGE, ROOT, ROOT / "docs", ROOT / "native", ROOT / "tests"))


def test_every_path_the_architecture_page_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = named_paths(text)
    assert len(named) > 40  # the page names the house's rooms, not a few of them
    assert [p for p in named if not exists(p)] == []


def test_every_folder_of_the_package_is_described():
    text = (ROOT / "docs" / "architecture.md").read_text()
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if f"`{f}/`" not in text] == []


def _folders_in_order(text: str) -> list[str]:
    """The folders as the page's table lists them, lowest first."""
    table = text[text.index("| folder | its job |"):]
    return re.findall(r"^\| `([a-z_]+)/` \|", table, flags=re.M)


def _imported_folders(path: Path) -> set[str]:
    """The package's folders a module imports (relative imports resolved)."""
    import ast
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[:len(package) - (node.level - 1)])
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            if target[0] != "commscope":
                continue
            if len(target) > 1:
                found.add(target[1])
            else:  # from commscope import folder, ... (or from .. import x in a folder)
                found |= {a.name for a in node.names if (PACKAGE / a.name).is_dir()}
    return found


def test_imports_between_folders_only_go_down_the_table():
    order = _folders_in_order((ROOT / "docs" / "architecture.md").read_text())
    rank = {folder: i for i, folder in enumerate(order)}
    upward = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) < 2:
            continue
        mine = parts[0]
        upward += [f"{path.relative_to(PACKAGE)} imports {other}/"
                   for other in _imported_folders(path)
                   if other != mine and other in rank and rank[other] > rank[mine]]
    assert sorted(upward) == []


def test_views_import_no_judging_module_and_statistics_no_results_file():
    """A view shows a verb's result and judges nothing (docs/architecture.md, views/): it
    imports no module of judge/, health/ or watch/; statistics take the history as an
    argument, so stats/ never opens the results file (store/store.py)."""
    judging = {"judge", "health", "watch"}
    found = [f"{p.relative_to(PACKAGE)} imports {sorted(_imported_folders(p) & judging)}"
             for p in (PACKAGE / "views").rglob("*.py") if _imported_folders(p) & judging]
    found += [str(p.relative_to(PACKAGE)) for p in (PACKAGE / "stats").rglob("*.py")
              if "store.store import" in p.read_text() or "import Store" in p.read_text()]
    assert found == []
