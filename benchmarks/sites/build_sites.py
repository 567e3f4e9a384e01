"""Rebuild the conformance set of real docs sites (issue 23) from benchmarks/sites/sites.toml.

For every site: fetch the release sdist, lay its source tree out as ROOT/NAME-VERSION/, build the
site with its own toolchain in its own venv (ROOT/.venvs/NAME), from a COPY of the tree when the
config must change, extract the ground truth with the shared truth scripts, and write
``_site-truth.json`` and ``site.json`` beside the tree.  Sites marked ``given`` are copied from
the shared data with their truth.  Usage:

    python3 benchmarks/sites/build_sites.py --root /work/sites [--only NAME ...] [--rebuild]

Needs pip and the package registries; takes minutes per site.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("sites.toml")
DEFAULT_TOOLS = REPO.parent / "shared" / "data" / "sites" / "tools"


def run(
    cmd: list[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> None:
    """Run a build step, its output appended to the site's log; a failing step stops the site."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise RuntimeError(f"{cmd[0]} exited {done.returncode} (see {log})")


def fetch_sdist(spec: str, cache: Path, log: Path) -> Path:
    """Download one release sdist (only that package from source: its build backend may be a
    wheel) and return the archive."""
    cache.mkdir(parents=True, exist_ok=True)
    name = spec.split("==")[0]
    before = set(cache.iterdir())
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", name,
         spec, "-d", str(cache)], log)  # fmt: skip
    new = set(cache.iterdir()) - before
    if new:
        return new.pop()
    # already in the cache: the archive whose normalized name and version match
    stem = spec.replace("==", "-").replace("-", "_").lower()
    for archive in cache.iterdir():
        if archive.name.replace("-", "_").lower().startswith(stem):
            return archive
    raise RuntimeError(f"no sdist for {spec} in {cache}")


def unpack(archive: Path, dest: Path) -> None:
    """Unpack an sdist so that its top folder becomes ``dest``."""
    staging = dest.with_name(dest.name + ".unpack")
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = staging.iterdir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(dest, ignore_errors=True)
    top.rename(dest)
    staging.rmdir()


def drop_mkdocs_plugins(text: str, names: list[str]) -> str:
    """Remove plugin entries (``- name`` or ``- name:`` with its indented options) from the
    top-level ``plugins:`` list, line by line: the file holds ``!!python/name`` and ``!ENV`` tags
    that a YAML round trip would not keep."""
    out: list[str] = []
    in_plugins = False
    skipping_indent: int | None = None
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not line.startswith((" ", "-")) and stripped:
            in_plugins = stripped.startswith("plugins:")
            skipping_indent = None
        elif in_plugins and stripped.startswith("- "):
            item = stripped[2:].split(":")[0].strip()
            if item in names:
                skipping_indent = indent
                continue
            skipping_indent = None
        elif skipping_indent is not None and (not stripped or indent > skipping_indent):
            continue
        out.append(line)
    return "".join(out)


def prepare_tree(site: dict[str, Any], root: Path, log: Path) -> Path:
    """The source tree citewise reads: ROOT/NAME-VERSION, as the sdist ships it."""
    tree = root / f"{site['name']}-{site['version']}"
    cache = root / ".sdists"
    if "source" in site:  # a folder of the shared data, as the release tag has it
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(REPO / site["source"], tree, symlinks=True)
    else:
        unpack(fetch_sdist(site["sdist"], cache, log), tree)
    for spec, where in site.get("extra_sdists", []):
        unpack(fetch_sdist(spec, cache, log), tree / where)
    return tree


def find_python(name: str) -> str:
    """An interpreter by name (``python3.13``) that runs: on PATH, else a pyenv version's
    (a pyenv shim on PATH refuses a version that is not selected)."""
    candidates = [shutil.which(name), *map(str, Path.home().glob(f".pyenv/versions/*/bin/{name}"))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    raise RuntimeError(f"no working {name} for this site")


def make_venv(site: dict[str, Any], root: Path, tree: Path, log: Path) -> Path:
    """The site's own build venv with its pinned toolchain (and the release when autodoc needs
    it); bs4 and Sphinx serve the truth scripts."""
    venv = root / ".venvs" / site["name"]
    python = venv / "bin" / "python"
    if not python.exists():
        # a site whose docs use newer syntax (griffe reads it with the running Python's ast)
        base = find_python(site["python"]) if site.get("python") else sys.executable
        run([base, "-m", "venv", str(venv)], log)
    packages = list(site.get("toolchain", []))
    if site.get("install_package"):
        packages.append(str(tree))
        packages += [str(tree / where) for _, where in site.get("extra_sdists", [])]
    run([str(python), "-m", "pip", "install", "-q", *packages, "beautifulsoup4"], log)
    return python


def build(site: dict[str, Any], root: Path, tree: Path, python: Path, log: Path) -> Path:
    """Build the site from a copy of the tree (configs may change there, never in the tree)."""
    work = root / ".build" / site["name"]
    shutil.rmtree(work, ignore_errors=True)
    copy = work / "src"
    shutil.copytree(tree, copy, symlinks=True)
    for path in sorted(copy.rglob("*")):
        # a link to a file the sdist does not ship (a repo-root logo): nothing to copy
        if path.is_symlink() and not path.exists():
            path.unlink()
            with log.open("a", encoding="utf-8") as out:
                out.write(f"removed dangling link {path.relative_to(copy)} from the build copy\n")
    out = work / "site"
    env = {**os.environ, **site.get("env", {})}
    config = copy / site["config"]
    bin_dir = python.parent
    if site["generator"] == "sphinx":
        if site.get("conf_append"):
            conf = config / "conf.py"
            conf.write_text(conf.read_text(encoding="utf-8") + "\n" + site["conf_append"] + "\n")
        run([str(bin_dir / "sphinx-build"), "-b", site["builder"], "-d", str(work / "doctrees"),
             str(config), str(out)], log, cwd=config, env=env)  # fmt: skip
    else:
        if site.get("drop_plugins"):
            config.write_text(drop_mkdocs_plugins(config.read_text(encoding="utf-8"),
                                                  site["drop_plugins"]))  # fmt: skip
        run([str(bin_dir / "mkdocs"), "build", "-f", str(config), "-d", str(out)],
            log, cwd=config.parent, env=env)  # fmt: skip
    return out


def site_record(site: dict[str, Any]) -> dict[str, Any]:
    """site.json: what `citewise sections` and the comparison need to know of the site."""
    version = site.get("site_version")
    base = site["site_url"] + (f"{version}/" if version else "")
    return {
        "name": site["name"], "version": site["version"], "generator": site["generator"],
        "builder": site["builder"], "docs_dir": site["docs_dir"], "site_url": site["site_url"],
        "site_version": version, "base_url": base, "published": site["published"],
        "page_form": site.get("page_form"),
        "features": site.get("features", []), "notes": site.get("notes", ""),
    }  # fmt: skip


def build_site(site: dict[str, Any], root: Path, tools: Path) -> None:
    """One site, start to end; its log is ROOT/.logs/NAME.log."""
    logs = root / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{site['name']}.log"
    log.write_text("", encoding="utf-8")
    if site.get("given"):
        tree = root / f"{site['name']}-{site['version']}"
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(REPO / site["given"], tree, symlinks=True)
        (tree / "site.json").write_text(json.dumps(site_record(site), indent=1) + "\n")
        return
    tree = prepare_tree(site, root, log)
    python = make_venv(site, root, tree, log)
    out = build(site, root, tree, python, log)
    script = "sphinx_truth.py" if site["generator"] == "sphinx" else "mkdocs_truth.py"
    args = [str(out), site["builder"]] if site["generator"] == "sphinx" else [str(out)]
    run([str(python), str(tools / script), *args, str(tree / "_site-truth.json")], log)
    (tree / "site.json").write_text(json.dumps(site_record(site), indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/work/sites"))
    parser.add_argument("--only", nargs="*", default=None, help="site names")
    parser.add_argument("--tools", type=Path, default=DEFAULT_TOOLS, help="truth scripts")
    args = parser.parse_args()
    sites = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["site"]
    failed = []
    for site in sites:
        if args.only and site["name"] not in args.only:
            continue
        print(f"{site['name']} {site['version']} ...", flush=True)
        try:
            build_site(site, args.root, args.tools)
        except (RuntimeError, OSError) as error:
            failed.append(site["name"])
            print(f"  failed: {error}", flush=True)
    print(f"{len(failed)} failed: {' '.join(failed)}" if failed else "all built")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
