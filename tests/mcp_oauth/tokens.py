"""Bearer JWTs for quire's `[server.oauth]` tests, signed by PyJWT (an
implementation independent of quire's), and the JWKS of their keys.

Usage:
  python tokens.py DIR < SPEC.json

SPEC: {"issuer", "audience", "tokens": {NAME: {"kid", "alg", "claims",
"exp_in"?, "tamper"?}}}. Makes an RSA key (kid "rsa", for RS256 and
PS256), a P-256 key ("ec") and an Ed25519 key ("ed"); writes their public
halves to DIR/jwks.json and prints {NAME: token} as JSON. `alg` "none"
makes an unsigned token, "HS256" one signed with a shared secret;
`tamper` flips a byte of the signature; a claim "pad" of N makes the
token about N bytes longer.
"""

import base64
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    out = sys.argv[1]
    spec = json.load(sys.stdin)
    keys = {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ec": ec.generate_private_key(ec.SECP256R1()),
        "ed": ed25519.Ed25519PrivateKey.generate(),
    }
    public = []
    for kid, key, to_jwk in (("rsa", keys["rsa"], RSAAlgorithm), ("ec", keys["ec"], ECAlgorithm), ("ed", keys["ed"], OKPAlgorithm)):
        jwk = json.loads(to_jwk.to_jwk(key.public_key()))
        jwk.update({"kid": kid, "use": "sig"})
        public.append(jwk)
    with open(f"{out}/jwks.json", "w") as f:
        json.dump({"keys": public}, f)

    now = int(time.time())
    tokens = {}
    for name, t in spec["tokens"].items():
        claims = {"iss": spec["issuer"], "aud": spec["audience"], "iat": now, "exp": now + t.get("exp_in", 300)}
        claims.update(t.get("claims", {}))
        pad = claims.pop("pad", 0)
        if pad:
            claims["padding"] = "x" * pad
        claims = {k: v for k, v in claims.items() if v is not None}
        headers = {"kid": t["kid"]}
        if t["alg"] == "none":
            head = b64(json.dumps({"alg": "none", "typ": "JWT", "kid": t["kid"]}).encode())
            token = f"{head}.{b64(json.dumps(claims).encode())}."
        elif t["alg"] == "HS256":
            token = jwt.encode(claims, "a-shared-secret-quire-never-holds", algorithm="HS256", headers=headers)
        else:
            key = keys[{"RS256": "rsa", "PS256": "rsa", "ES256": "ec", "EdDSA": "ed"}[t["alg"]]]
            token = jwt.encode(claims, key, algorithm=t["alg"], headers=headers)
        if t.get("tamper"):
            head, body, sig = token.split(".")
            raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
            raw[0] ^= 1
            token = f"{head}.{body}.{b64(bytes(raw))}"
        tokens[name] = token
    print(json.dumps(tokens))


if __name__ == "__main__":
    main()
