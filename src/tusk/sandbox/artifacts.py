"""Artifact archives: the zip files the sandbox serves for Actions artifacts."""

from __future__ import annotations

import hashlib
import io
import zipfile


def zip_files(files: dict[str, str | bytes]) -> bytes:
    """A deterministic zip of ``files`` (name → content), as upload-artifact would store."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content.encode() if isinstance(content, str) else content)
    return buffer.getvalue()


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
