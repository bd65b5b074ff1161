"""A module file's seal: the SHA-256 of its manifest and, optionally, an Ed25519 signature.

The manifest lists every other entry of the file with its SHA-256 (and the reader refuses any
entry it does not list), so the manifest's own hash covers the whole file, and a signature of the
manifest signs all of it. The seal is the entry `integrity.json`:

    {"manifest_sha256": "<hex>",
     "signature": {"algorithm": "ed25519", "key": "SHA256:<fingerprint>", "value": "<base64>"}}

The signature is over `DOMAIN + manifest bytes` (the domain keeps it from being valid for anything
else the key signs). A key's fingerprint is OpenSSH's (`ssh-keygen -lf key.pub` prints the same).

Keys are files in the usual forms: a private key as PKCS#8 PEM (`openssl genpkey -algorithm ed25519`,
`mlirtext keygen`) or OpenSSH (`ssh-keygen -t ed25519`), a public key as PEM (`openssl pkey -pubout`)
or OpenSSH (`ssh-ed25519 AAAA...`). Signing and checking need the `cryptography` package (the `sign`
extra); it is imported only when a key is used, so loading unsigned modules does not need it.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os

INTEGRITY = "integrity.json"
DOMAIN = b"mlirtext-vmpack signature v1\n"
ALGORITHM = "ed25519"


class SignatureError(Exception):
    """A key that cannot be used, or a module file whose seal or signature does not hold."""


def _crypto():
    """The parts of `cryptography` used here (imported on first use: an optional dependency)."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise SignatureError("signing and checking module files needs the cryptography package "
                             "(pip install 'mlirtext[sign]')") from None
    return serialization, ed25519, InvalidSignature


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(public_key) -> str:
    """OpenSSH's fingerprint of an Ed25519 public key: SHA256:<base64 of the hash of its blob>."""
    serialization, _, _ = _crypto()
    line = public_key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    digest = hashlib.sha256(base64.b64decode(line.split()[1])).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def seal(manifest: bytes, private_key=None) -> bytes:
    """The `integrity.json` of a file with this manifest, signed when `private_key` is given."""
    record = {"manifest_sha256": checksum(manifest)}
    if private_key is not None:
        record["signature"] = {"algorithm": ALGORITHM, "key": fingerprint(private_key.public_key()),
                               "value": base64.b64encode(private_key.sign(DOMAIN + manifest)).decode()}
    return json.dumps(record, indent=1).encode()


def check_signature(manifest: bytes, record: dict, trusted_keys: list) -> str:
    """The fingerprint of the trusted key whose signature of `manifest` the seal `record` holds;
    SignatureError when it holds none, or a signature none of `trusted_keys` made."""
    _, _, InvalidSignature = _crypto()
    sig = record.get("signature")
    if sig is None:
        raise SignatureError("the module file is not signed, and trusted keys were given (sign it with "
                             "`mlirtext compile --sign KEY`)")
    if not isinstance(sig, dict) or sig.get("algorithm") != ALGORITHM or not isinstance(sig.get("value"), str):
        raise SignatureError(f"the module file's signature is not an {ALGORITHM} signature")
    try:
        value = base64.b64decode(sig["value"], validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("the module file's signature is not base64") from None
    for key in trusted_keys:
        try:
            key.verify(value, DOMAIN + manifest)
            return fingerprint(key)
        except InvalidSignature:
            continue
    signer = sig.get("key") if isinstance(sig.get("key"), str) else "?"
    raise SignatureError(f"the module file's signature (key {signer[:60]}) was not made by a trusted key "
                         f"({', '.join(fingerprint(k) for k in trusted_keys)}), or the file was changed after "
                         "it was signed")


def load_private_key(path: str):
    """The Ed25519 private key in file `path` (PKCS#8 PEM or OpenSSH, unencrypted)."""
    serialization, ed25519, _ = _crypto()
    data = _read(path)
    try:
        if data.lstrip().startswith(b"-----BEGIN OPENSSH PRIVATE KEY"):
            key = serialization.load_ssh_private_key(data, password=None)
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as e:
        raise SignatureError(f"{path}: not an unencrypted private key in PEM or OpenSSH form ({e})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise SignatureError(f"{path}: not an Ed25519 private key (a {type(key).__name__})")
    return key


def load_public_key(path: str):
    """The Ed25519 public key in file `path`: PEM, an OpenSSH line, or a private key file's public half."""
    serialization, ed25519, _ = _crypto()
    data = _read(path)
    text = data.lstrip()
    try:
        if text.startswith(b"ssh-"):
            key = serialization.load_ssh_public_key(text.split(b"\n")[0].strip())
        elif b"PRIVATE KEY" in text[:64]:
            key = load_private_key(path).public_key()
        else:
            key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, IndexError) as e:
        raise SignatureError(f"{path}: not a public key in PEM or OpenSSH form ({e})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise SignatureError(f"{path}: not an Ed25519 public key")
    return key


def load_public_keys(paths) -> list:
    """The keys of `paths` (one path, or several); public keys already loaded pass through."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [load_public_key(os.fspath(p)) if isinstance(p, (str, os.PathLike)) else p for p in paths]


def generate_key(path: str) -> str:
    """Write a new Ed25519 key pair: `path` (PKCS#8 PEM, readable by its owner only) and `path.pub`
    (PEM). Its fingerprint."""
    serialization, ed25519, _ = _crypto()
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    for name in (path, path + ".pub"):
        if os.path.lexists(name):
            raise SignatureError(f"'{name}' exists: a key file is never overwritten")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private)
        with open(path + ".pub", "xb") as f:
            f.write(public)
    except OSError as e:
        raise SignatureError(f"cannot write key file '{e.filename}': {e.strerror}") from None
    return fingerprint(key.public_key())


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError as e:
        raise SignatureError(f"cannot read key file '{path}': {e.strerror}") from None
