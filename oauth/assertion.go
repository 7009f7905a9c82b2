package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgram/mcpgram"
)

// private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): the client
// authenticates at the token endpoint with a JWT it signs with its
// private key, whose public half the authorization server has.
const (
	authJWT       = "private_key_jwt"
	assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	// assertionLife is how long an assertion is good for: only for the
	// request it is made for.
	assertionLife = 5 * time.Minute
)

// assertion is the signed JWT that authenticates the client of cfg to
// the authorization server as: issued by the client, about the client,
// for the authorization server's issuer identifier (the audience the
// MCP extension's conformance suite and draft-ietf-oauth-rfc7523bis
// take), good for a few minutes, with a fresh jti.
func assertion(cfg mcpgram.OAuthConfig, as authServer, now time.Time) (string, error) {
	key, err := parsePrivateKey(cfg.PrivateKey)
	if err != nil {
		return "", err
	}
	method, err := signingMethod(key, as.SigningAlgs)
	if err != nil {
		return "", err
	}
	claims := jwt.RegisteredClaims{
		Issuer:    cfg.ClientID,
		Subject:   cfg.ClientID,
		Audience:  jwt.ClaimStrings{as.Issuer},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLife)),
		ID:        randomID(),
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign the client assertion: %w", err)
	}
	return s, nil
}

// parsePrivateKey reads a PEM private key: PKCS #8 (BEGIN PRIVATE KEY),
// SEC 1 (BEGIN EC PRIVATE KEY) or PKCS #1 (BEGIN RSA PRIVATE KEY). Its
// errors say nothing of the key.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("the client's private key is not PEM")
	}
	var key any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("the client's private key (%s) does not parse", b.Type)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey:
		return k.(crypto.Signer), nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("the client's private key is a %T: want an EC (P-256, P-384, P-521), RSA or Ed25519 key", key)
}

// signingMethod is the JWS algorithm of key: ES256, ES384 or ES512 by
// curve, RS256 for RSA (PS256 where the authorization server lists it
// and not RS256), EdDSA for Ed25519. One the authorization server does
// not list (token_endpoint_auth_signing_alg_values_supported, when it
// lists any) is refused, saying which it takes.
func signingMethod(key crypto.Signer, supported []string) (jwt.SigningMethod, error) {
	var m jwt.SigningMethod
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			m = jwt.SigningMethodES256
		case elliptic.P384():
			m = jwt.SigningMethodES384
		case elliptic.P521():
			m = jwt.SigningMethodES512
		default:
			return nil, errors.New("the client's EC private key is on a curve JWS has no algorithm for")
		}
	case *rsa.PrivateKey:
		m = jwt.SigningMethodRS256
		if len(supported) > 0 && !slices.Contains(supported, "RS256") && slices.Contains(supported, "PS256") {
			m = jwt.SigningMethodPS256
		}
	case ed25519.PrivateKey:
		m = jwt.SigningMethodEdDSA
	}
	if len(supported) > 0 && !slices.Contains(supported, m.Alg()) {
		return nil, fmt.Errorf("the client's private key signs %s, which the authorization server does not take (it takes %s)", m.Alg(), oneLine(strings.Join(supported, ", ")))
	}
	return m, nil
}

// randomID is a fresh jti: 128 random bits.
func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
