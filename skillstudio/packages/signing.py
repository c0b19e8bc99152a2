"""Package identity: ed25519 publisher keys, manifest signatures, and the library's memory of
which key first brought each package identity (trust on first use, docs/packages.md).

* A publisher's key is made on its first export and kept in the user's config folder
  (``<config>/SkillStudio/keys/<publisher>.ed25519``, PKCS#8 PEM, mode 0600).
* A signed manifest carries a top-level ``signature:`` block (``algorithm``, ``public_key`` as
  base64 of the raw 32 bytes, ``fingerprint``, ``value``). The signature covers the canonical
  JSON of the whole manifest without ``signature.value`` and ``signature.fingerprint`` (so the
  file hashes under ``package.files``, and the key itself, are signed).
* A fingerprint is the first 16 hex digits of the SHA-256 of the raw public key.
* ``studio_package_keys`` (migration) remembers per identity (``publisher/name``) the key that
  first brought it; :func:`check_trust` refuses another key, or an unsigned package, for it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from skillstudio.model import Issue
from skillstudio.packages.errors import PackageError, refuse
from skillstudio.store import SkillRepository

ALGORITHM = "ed25519"
_DOMAIN = b"skillstudio.icpkg.manifest.v1\n"  # signatures made for manifests sign nothing else
_PUBLISHER = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")  # icpkg.PUBLISHER
_FINGERPRINT = re.compile(r"^[0-9a-f]{16}$")


def fingerprint(public_key: bytes) -> str:
    """Short hex id of a raw ed25519 public key: sha256, first 16 hex digits."""
    return hashlib.sha256(public_key).hexdigest()[:16]


@dataclass(frozen=True)
class Signer:
    """The verified public key a package was signed with."""

    public_key: bytes  # raw, 32 bytes

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    @property
    def public_key_b64(self) -> str:
        return base64.b64encode(self.public_key).decode("ascii")


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey

    @property
    def public_key(self) -> bytes:
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)


# --- keys ---------------------------------------------------------------------------------------


def keys_dir() -> Path:
    import platformdirs

    return platformdirs.user_config_path("SkillStudio", appauthor=False) / "keys"


def key_path(publisher: str) -> Path:
    if not isinstance(publisher, str) or not _PUBLISHER.match(publisher):
        raise refuse("--publisher", f"{publisher!r} is not a publisher name (1-64 of a-z, 0-9, -, _)")
    return keys_dir() / f"{publisher}.ed25519"


def load_or_create_key(publisher: str) -> SigningKey:
    """The publisher's signing key, made (mode 0600) on first use."""
    path = key_path(publisher)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        private = Ed25519PrivateKey.generate()
        pem = private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # made meanwhile by another export: use that one
            pass
        else:
            with os.fdopen(handle, "wb") as stream:
                stream.write(pem)
            return SigningKey(private)
    try:
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise refuse(str(path), f"cannot be read as an ed25519 key ({error})") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise refuse(str(path), "is not an ed25519 private key")
    return SigningKey(loaded)


# --- signatures ---------------------------------------------------------------------------------


def _canonical(manifest: dict[str, Any]) -> bytes:
    body = {key: value for key, value in manifest.items() if key != "signature"}
    block = manifest.get("signature") or {}
    body["signature"] = {"algorithm": block.get("algorithm"), "public_key": block.get("public_key")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return _DOMAIN + text.encode("utf-8")


def sign_manifest(manifest: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """The manifest with its ``signature`` block (deterministic: ed25519 signs the same way)."""
    signed = {k: v for k, v in manifest.items() if k != "signature"}
    signed["signature"] = {
        "algorithm": ALGORITHM,
        "public_key": base64.b64encode(key.public_key).decode("ascii"),
        "fingerprint": key.fingerprint,
    }
    value = key.private.sign(_canonical(signed))
    signed["signature"]["value"] = base64.b64encode(value).decode("ascii")
    return signed


def verify_manifest(manifest: dict[str, Any]) -> Signer:
    """The signer of a manifest holding a ``signature`` block; PackageError naming why not."""
    where = "manifest.yaml: signature"
    block = manifest.get("signature")
    if not isinstance(block, dict):
        raise refuse(where, "expected a mapping (algorithm, public_key, fingerprint, value)")
    if block.get("algorithm") != ALGORITHM:
        raise refuse(where, f"algorithm {block.get('algorithm')!r} is not {ALGORITHM}")
    try:
        public = base64.b64decode(str(block.get("public_key", "")), validate=True)
        value = base64.b64decode(str(block.get("value", "")), validate=True)
    except (binascii.Error, ValueError):
        raise refuse(where, "public_key or value is not base64") from None
    if len(public) != 32 or len(value) != 64:
        raise refuse(where, "public_key must be 32 bytes and value 64 bytes")
    stated = block.get("fingerprint")
    if stated is not None and stated != fingerprint(public):
        raise refuse(where, f"fingerprint {stated!r} is not that of its public key ({fingerprint(public)})")
    try:
        content = _canonical(manifest)
        Ed25519PublicKey.from_public_bytes(public).verify(value, content)
    except (InvalidSignature, ValueError, TypeError):
        raise refuse(
            where, f"does not verify with key {fingerprint(public)}: the manifest or a file was changed after signing"
        ) from None
    return Signer(public)


# --- trust on first use -------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownKey:
    identity: str
    fingerprint: str
    public_key: str  # base64
    first_seen: str


class UntrustedPackage(PackageError):
    """The package claims an identity another key brought first; nothing was written."""

    def __init__(self, issues: Iterable[Issue], *, context: str = "import refused (package identity)") -> None:
        super().__init__(issues, context=context)


def known_key(repository: SkillRepository, identity: str) -> KnownKey | None:
    """The key the library remembers for ``publisher/name`` (None: never signed here)."""
    from sqlalchemy import text

    with repository.database.read() as session:
        row = session.execute(
            text("SELECT identity, fingerprint, public_key, first_seen FROM studio_package_keys WHERE identity = :i"),
            {"i": identity},
        ).first()
    return KnownKey(*row) if row is not None else None


def normalise_fingerprint(value: str | None) -> str | None:
    if value is None:
        return None
    folded = value.strip().lower().replace(":", "")
    if not _FINGERPRINT.match(folded):
        raise refuse("--trust-key", f"{value!r} is not a key fingerprint (16 hex digits, as import prints it)")
    return folded


def check_trust(
    known: KnownKey | None, identity: str, signer: Signer | None, trust_key: str | None
) -> Literal["keep", "record", "replace"]:
    """What the import may do about the identity's key: ``"keep"`` (nothing to record),
    ``"record"`` (first signed package of it: remember its key), ``"replace"`` (the user trusts
    a new key: remember that one). Raises UntrustedPackage otherwise."""
    trusted = normalise_fingerprint(trust_key)
    if known is None:
        return "record" if signer is not None else "keep"
    if signer is None:
        raise UntrustedPackage(
            [
                refuse_issue(
                    identity,
                    f"this package is unsigned, but {identity} was first brought by key "
                    f"{known.fingerprint} (since {known.first_seen}); an unsigned package cannot update it",
                )
            ]
        )
    if signer.fingerprint == known.fingerprint:
        return "keep"
    if trusted == signer.fingerprint:
        return "replace"
    raise UntrustedPackage(
        [
            refuse_issue(
                identity,
                f"signed by key {signer.fingerprint}, but {identity} was first brought by key "
                f"{known.fingerprint} (since {known.first_seen}); if you trust the new key, import with "
                f"--trust-key {signer.fingerprint}",
            )
        ]
    )


def refuse_issue(identity: str, message: str) -> Issue:
    return Issue(f"package {identity}", message)


__all__ = [
    "ALGORITHM",
    "KnownKey",
    "Signer",
    "SigningKey",
    "UntrustedPackage",
    "check_trust",
    "fingerprint",
    "key_path",
    "keys_dir",
    "known_key",
    "load_or_create_key",
    "sign_manifest",
    "verify_manifest",
]
