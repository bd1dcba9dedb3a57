"""What a user reads is in the repository and agrees with the packaging: no pointers to files
outside it, and the README's dependency list is pyproject's."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = {".md", ".toml", ".py", ".c", ".h", ".ld", ".s", ".S", ".sh", ".txt", ""}
# (spelled in pieces so that this file does not match itself)
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "FACTS" + r"\.md", "shared/" + "reference", "DESIGN" + r"\.md",
                               "/work/" + "main"]))


def _documents():
    for top in ["README.md", "pyproject.toml", "docs", "boards", "cores", "powermodels", "src", "benchmarks",
                "tests", "firmware", "scripts", ".ci"]:
        path = ROOT / top
        files = [path] if path.is_file() else path.rglob("*")
        for file in files:
            if file.is_file() and file.suffix in TEXT and "build" not in file.relative_to(ROOT).parts:
                yield file


def test_nothing_points_outside_the_repository():
    found = []
    for file in _documents():
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{file.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_readme_names_every_dependency_and_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    readme = (ROOT / "README.md").read_text()
    paragraph = readme[readme.index("mcusim alone needs"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    names = [re.match(r"[A-Za-z0-9_.-]+", dependency).group() for dependency in project["dependencies"]]
    missing = [name for name in names if name not in paragraph]
    assert not missing, f"README leaves out {missing}"
    for extra, packages in project["optional-dependencies"].items():
        if extra != "test":
            assert f"[{extra}]" in paragraph
            assert all(re.match(r"[A-Za-z0-9_.-]+", package).group() in paragraph for package in packages)
    assert set(project["optional-dependencies"]["test"]) >= {p for extra, packages in
                                                              project["optional-dependencies"].items()
                                                              if extra != "test" for p in packages}
