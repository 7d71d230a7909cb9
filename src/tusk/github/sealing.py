"""A secret's value sealed for GitHub's Actions secrets API (pure).

GitHub stores a repository secret only encrypted with the repository's public key
(``GET /repos/{owner}/{repo}/actions/secrets/public-key``), as a libsodium sealed
box ("Encrypting secrets for the REST API": docs.github.com/rest/guides/encrypting-
secrets-for-the-rest-api); PyNaCl is libsodium's binding. The value leaves Tusk only
sealed, in the ``encrypted_value`` of ``PUT .../actions/secrets/{name}``.
"""

from __future__ import annotations

import base64

from nacl.public import PublicKey, SealedBox
from pydantic import SecretStr


def seal(value: SecretStr, public_key: str) -> str:
    """``value`` sealed with the Base64 ``public_key`` GitHub gave, in Base64."""
    box = SealedBox(PublicKey(base64.b64decode(public_key)))
    return base64.b64encode(box.encrypt(value.get_secret_value().encode("utf-8"))).decode()
