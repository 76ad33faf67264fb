"""Model references to local files: a ``.gguf`` path as given, or ``hf:OWNER/REPO/FILE.gguf`` from the Hub.

One job: :func:`model_file` turns a model reference into the path of a GGUF file on this disk, which is what
llama-server needs. Most GGUF models are published on the Hugging Face Hub, so instead of a separate download
step a reference can name the file there::

    hf:OWNER/REPO/FILE.gguf              the file on the repo's default branch (FILE may include folders)
    hf:OWNER/REPO@REVISION/FILE.gguf     at a branch, tag or commit hash (a revision without "/")

for example ``hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``. The file is
fetched with ``huggingface_hub`` (the ``local`` extra) into its own shared cache, so ``HF_HOME``,
``HF_HUB_CACHE``, ``HF_ENDPOINT``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE`` work as for every other Hub tool and a
model already downloaded by one of them is reused. A file already in the cache is used without asking the Hub
(plain ``hf_hub_download`` would send a HEAD request first, and fail on a machine without network): to pick up
a newer upload to the same branch, name the revision or delete the cached copy (``hf cache rm``). A model split
into ``-00001-of-0000N.gguf`` parts is fetched whole, next to each other, as llama-server expects.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelConfigError

HF_PREFIX = "hf:"
INSTALL = "pip install 'notebook-agent[local]'"
EXAMPLE = "hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
_FORMS = f"hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO@REVISION/FILE.gguf (FILE may include folders), e.g. {EXAMPLE}"
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,95}")
_SPLIT = re.compile(r"(?P<stem>.+)-(?P<part>\d{5})-of-(?P<count>\d{5})\.gguf", re.IGNORECASE)


class ModelFileError(ModelConfigError):
    """A model reference cannot be turned into a local file: a malformed ``hf:`` reference, huggingface_hub
    missing, or a Hub file that cannot be fetched (not found, no access, no network)."""


@dataclass(frozen=True)
class HfRef:
    """A parsed ``hf:`` reference."""

    repo_id: str
    filename: str
    revision: str | None = None

    def __str__(self) -> str:
        at = f"@{self.revision}" if self.revision else ""
        return f"{HF_PREFIX}{self.repo_id}{at}/{self.filename}"


def is_hf_ref(ref: str) -> bool:
    return ref.strip().startswith(HF_PREFIX)


def _malformed(ref: str, why: str) -> ModelFileError:
    return ModelFileError(f"Malformed Hugging Face model reference {ref!r}: {why}. Expected {_FORMS}.")


def parse_hf_ref(ref: str) -> HfRef:
    """Split ``hf:OWNER/REPO[@REVISION]/FILE.gguf``; a malformed reference raises before any network access."""
    body = ref.strip()[len(HF_PREFIX) :]
    if body.startswith("/"):
        raise _malformed(ref, "no '/' or '//' goes after 'hf:'")
    parts = body.split("/")
    if len(parts) < 3 or any(not part or part != part.strip() for part in parts):
        raise _malformed(ref, "it needs an owner, a repo and a file name, separated by single '/'")
    owner, repo_at, *path = parts
    repo, at, revision = repo_at.partition("@")
    if at and not revision:
        raise _malformed(ref, "the revision after '@' is empty")
    for kind, name in (("owner", owner), ("repo", repo)):
        if not _NAME.fullmatch(name) or ".." in name or "--" in name:
            raise _malformed(ref, f"{name!r} is not a valid {kind} name (letters, digits, '-', '_' and '.')")
    if any(part in (".", "..") or "\\" in part for part in path):
        raise _malformed(ref, "the file path may not contain '.', '..' or '\\' parts")
    filename = "/".join(path)
    if not filename.lower().endswith(".gguf"):
        raise ModelFileError(
            f"{ref!r} does not name a .gguf file ({filename!r}): llama-server runs GGUF model files. Pick a file "
            f"ending in .gguf from the repo's file list (a repo of GGUF files usually has -GGUF in its name), "
            f"e.g. {EXAMPLE}."
        )
    return HfRef(f"{owner}/{repo}", filename, revision or None)


def split_parts(filename: str) -> list[str]:
    """Every part of a split GGUF (``x-00001-of-00003.gguf`` ...), first part first; ``[filename]`` if unsplit."""
    match = _SPLIT.fullmatch(filename)
    if match is None:
        return [filename]
    count = int(match["count"])
    suffix = filename[-len(".gguf") :]
    return [f"{match['stem']}-{i:05d}-of-{match['count']}{suffix}" for i in range(1, count + 1)]


def model_file(ref: str | os.PathLike[str]) -> Path:
    """The local GGUF file ``ref`` names: a path (``~`` expanded, made absolute; its existence is checked by
    the caller; a ``Path`` is always one), or ``hf:OWNER/REPO[@REVISION]/FILE.gguf`` downloaded once into
    huggingface_hub's cache.

    The file's own name is kept even when it is a symlink (as in the Hub cache, whose snapshot files link to
    blobs named by hash): llama-server and the model take their name from it."""
    if not isinstance(ref, str) or not is_hf_ref(ref):
        path = Path(ref).expanduser()
        return path.parent.resolve() / path.name
    hf = parse_hf_ref(ref)
    try:
        import huggingface_hub  # noqa: F401
    except ImportError as exc:
        raise ModelFileError(
            f"{ref} names a file on the Hugging Face Hub, which needs the huggingface_hub package: {INSTALL}. "
            f"Or download the .gguf yourself and pass its path."
        ) from exc
    paths = [_fetch(hf, name) for name in split_parts(hf.filename)]
    return paths[0]  # llama-server opens the first part of a split model and finds the others beside it


def _fetch(hf: HfRef, filename: str) -> Path:
    """One file: from the cache if it is there (a look at the disk only), else downloaded."""
    from huggingface_hub import constants, hf_hub_download, try_to_load_from_cache

    # Not hf_hub_download(local_files_only=True): it still builds the request headers, and huggingface_hub's
    # telemetry may then fetch {HF_ENDPOINT}/api/agent-harnesses (once a day).
    try:
        cached = try_to_load_from_cache(hf.repo_id, filename, revision=hf.revision)
    except ValueError as exc:  # huggingface_hub's own validation of the repo id or file name
        raise _malformed(str(hf), str(exc)) from exc
    if isinstance(cached, str):
        return Path(cached)
    print(
        f"Downloading {filename} from {hf.repo_id} on the Hugging Face Hub into {constants.HF_HUB_CACHE} "
        f"(once: later runs use the cached file).",
        file=sys.stderr,
        flush=True,
    )
    try:
        path = hf_hub_download(hf.repo_id, filename, revision=hf.revision, library_name="notebook-agent")
    except Exception as exc:
        error = download_error(exc, hf, filename)
        if error is None:
            raise
        raise error from exc
    return Path(path)


def download_error(exc: BaseException, hf: HfRef, filename: str) -> ModelFileError | None:
    """What a failed ``hf_hub_download`` means for the person who wrote the reference; None: not a Hub error."""
    from huggingface_hub import constants
    from huggingface_hub.utils import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    status = getattr(getattr(exc, "response", None), "status_code", None)
    http = f" (HTTP {status})" if status else ""
    hub = constants.ENDPOINT
    page = f"{hub}/{hf.repo_id}"
    revision = hf.revision or "main"
    token = (
        "the token in HF_TOKEN was sent, but its account may not read it; use a token of an account that may"
        if os.environ.get("HF_TOKEN")
        else "set HF_TOKEN to an access token of an account that may read it (or log in with `hf auth login`)"
    )
    if isinstance(exc, GatedRepoError) or (status in (401, 403) and not isinstance(exc, RepositoryNotFoundError)):
        return ModelFileError(
            f"Access to the Hugging Face repo {hf.repo_id} was refused{http}: it is gated or private. "
            f"{token[0].upper()}{token[1:]}. For a gated model, that account must first accept the model's terms "
            f"on {page}."
        )
    if isinstance(exc, RepositoryNotFoundError):
        return ModelFileError(
            f"The Hugging Face repo {hf.repo_id} was not found at {hub}{http}. Check the owner and repo name in "
            f"{hf}. A private repo looks missing to an account without access: {token}."
        )
    if isinstance(exc, RevisionNotFoundError):
        return ModelFileError(
            f"The Hugging Face repo {hf.repo_id} has no revision {revision!r}{http}. Use a branch, tag or commit "
            f"of the repo after '@', or leave '@...' out for the default branch."
        )
    if isinstance(exc, LocalEntryNotFoundError):
        if constants.HF_HUB_OFFLINE:
            return ModelFileError(
                f"{filename} from {hf.repo_id} is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and "
                f"HF_HUB_OFFLINE is set: unset it to download the file, or pass the path of a local .gguf."
            )
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None and str(cause) else ""
        return ModelFileError(
            f"Could not reach the Hugging Face Hub at {hub} to download {filename} from {hf.repo_id}{detail}, and "
            f"the file is not in the cache ({constants.HF_HUB_CACHE}). Check the network (and proxy settings); "
            f"HF_ENDPOINT names another Hub address such as a mirror; or download the .gguf some other way and "
            f"pass its path instead of the hf: reference."
        )
    if isinstance(exc, EntryNotFoundError):
        return ModelFileError(
            f"The Hugging Face repo {hf.repo_id} has no file {filename!r} at revision {revision!r}{http}. Check the "
            f"file name (case matters) in the repo's file list: {page}/tree/{revision}."
        )
    if isinstance(exc, HfHubHTTPError):
        return ModelFileError(
            f"The Hugging Face Hub at {hub} refused the download of {filename} from {hf.repo_id}{http}: "
            f"{str(exc).splitlines()[0]}. Try again later; if it keeps failing, download the .gguf some other way "
            f"and pass its path."
        )
    if isinstance(exc, OSError):
        return ModelFileError(
            f"Downloading {filename} from {hf.repo_id} into {constants.HF_HUB_CACHE} failed: {exc}. Check the free "
            f"disk space and the network, then run again."
        )
    return None
