//! RFC 6238 one-time codes (TOTP): a configured secret read (a base32 key or an
//! `otpauth://totp/` URI) and the code of an instant. The `totp` tool group and
//! the host's origin-bound credentials share it.

use hmac::{Hmac, KeyInit, Mac};

/// Hash function of the HMAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// HMAC-SHA-1 (the default).
    Sha1,
    /// HMAC-SHA-256.
    Sha256,
    /// HMAC-SHA-512.
    Sha512,
}

/// What a configured secret says: the key and the code's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TotpParams {
    /// The shared key (decoded from base32).
    pub key: Vec<u8>,
    /// HMAC hash.
    pub algorithm: Algorithm,
    /// Digits in a code (6-10).
    pub digits: u32,
    /// Seconds a code lives (1-3600).
    pub period: u64,
}

/// Why a configured secret cannot be used. The secret itself is never quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretError(pub String);

/// Parse a configured secret: a base32 key (spaces, dashes, lowercase and missing
/// padding allowed) or an `otpauth://totp/...?secret=...&algorithm=...&digits=...&period=...` URI.
pub fn parse_secret(raw: &str) -> Result<TotpParams, SecretError> {
    let raw = raw.trim();
    let lower = raw.to_ascii_lowercase();
    if !lower.starts_with("otpauth://") {
        return Ok(TotpParams {
            key: decode_base32(raw)?,
            algorithm: Algorithm::Sha1,
            digits: 6,
            period: 30,
        });
    }
    let rest = &raw["otpauth://".len()..];
    let (kind, rest) =
        rest.split_once('/').ok_or_else(|| SecretError("otpauth URI has no type".into()))?;
    if !kind.eq_ignore_ascii_case("totp") {
        return Err(SecretError(format!("otpauth URI type {kind:?} is not supported (only totp)")));
    }
    let query = rest.split_once('?').map(|(_, q)| q).unwrap_or("");
    let query = query.split('#').next().unwrap_or("");
    let mut params =
        TotpParams { key: Vec::new(), algorithm: Algorithm::Sha1, digits: 6, period: 30 };
    let mut have_secret = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_decode(v);
        match k.to_ascii_lowercase().as_str() {
            "secret" => {
                params.key = decode_base32(&v)?;
                have_secret = true;
            }
            "algorithm" => {
                params.algorithm = match v.to_ascii_uppercase().as_str() {
                    "SHA1" => Algorithm::Sha1,
                    "SHA256" => Algorithm::Sha256,
                    "SHA512" => Algorithm::Sha512,
                    other => {
                        return Err(SecretError(format!(
                            "otpauth algorithm {other:?} is not supported (SHA1, SHA256, SHA512)"
                        )));
                    }
                }
            }
            "digits" => {
                params.digits = v
                    .parse()
                    .ok()
                    .filter(|d| (6..=10).contains(d))
                    .ok_or_else(|| SecretError(format!("otpauth digits {v:?} is not 6-10")))?;
            }
            "period" => {
                params.period =
                    v.parse().ok().filter(|p| (1..=3600).contains(p)).ok_or_else(|| {
                        SecretError(format!("otpauth period {v:?} is not 1-3600 seconds"))
                    })?;
            }
            _ => {}
        }
    }
    if !have_secret {
        return Err(SecretError("otpauth URI has no secret parameter".into()));
    }
    Ok(params)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn decode_base32(s: &str) -> Result<Vec<u8>, SecretError> {
    let cleaned: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let cleaned = cleaned.trim_end_matches('=');
    if cleaned.is_empty() {
        return Err(SecretError("the secret is empty".into()));
    }
    let key = data_encoding::BASE32_NOPAD
        .decode(cleaned.as_bytes())
        .map_err(|_| SecretError("the secret is not valid base32 (A-Z, 2-7)".into()))?;
    if key.is_empty() {
        return Err(SecretError("the secret decodes to no bytes".into()));
    }
    Ok(key)
}

fn hmac_digest(algorithm: Algorithm, key: &[u8], msg: &[u8]) -> Vec<u8> {
    fn run<M: Mac + KeyInit>(key: &[u8], msg: &[u8]) -> Vec<u8> {
        // HMAC accepts keys of any length, so new_from_slice cannot fail.
        match <M as KeyInit>::new_from_slice(key) {
            Ok(mut mac) => {
                mac.update(msg);
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        }
    }
    match algorithm {
        Algorithm::Sha1 => run::<Hmac<sha1::Sha1>>(key, msg),
        Algorithm::Sha256 => run::<Hmac<sha2::Sha256>>(key, msg),
        Algorithm::Sha512 => run::<Hmac<sha2::Sha512>>(key, msg),
    }
}

/// The code for `unix_secs` (RFC 6238 over RFC 4226's dynamic truncation).
pub fn totp_code(params: &TotpParams, unix_secs: u64) -> String {
    let counter = unix_secs / params.period.max(1);
    let digest = hmac_digest(params.algorithm, &params.key, &counter.to_be_bytes());
    let Some(&last) = digest.last() else {
        return String::new();
    };
    let offset = usize::from(last & 0x0f);
    let bin = u32::from_be_bytes([
        digest[offset] & 0x7f,
        digest[offset + 1],
        digest[offset + 2],
        digest[offset + 3],
    ]);
    let modulus = 10u64.pow(params.digits);
    let value = u64::from(bin) % modulus;
    format!("{value:0width$}", width = params.digits as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(seed: &[u8], algorithm: Algorithm) -> TotpParams {
        TotpParams { key: seed.to_vec(), algorithm, digits: 8, period: 30 }
    }

    /// RFC 6238, Appendix B.
    #[test]
    fn rfc6238_vectors() {
        let sha1 = params(b"12345678901234567890", Algorithm::Sha1);
        let sha256 = params(b"12345678901234567890123456789012", Algorithm::Sha256);
        let sha512 = params(
            b"1234567890123456789012345678901234567890123456789012345678901234",
            Algorithm::Sha512,
        );
        let cases: [(u64, &str, &str, &str); 6] = [
            (59, "94287082", "46119246", "90693936"),
            (1111111109, "07081804", "68084774", "25091201"),
            (1111111111, "14050471", "67062674", "99943326"),
            (1234567890, "89005924", "91819424", "93441116"),
            (2000000000, "69279037", "90698825", "38618901"),
            (20000000000, "65353130", "77737706", "47863826"),
        ];
        for (t, c1, c256, c512) in cases {
            assert_eq!(totp_code(&sha1, t), c1, "sha1 at {t}");
            assert_eq!(totp_code(&sha256, t), c256, "sha256 at {t}");
            assert_eq!(totp_code(&sha512, t), c512, "sha512 at {t}");
        }
    }

    #[test]
    fn six_digit_default_matches_rfc_truncation() {
        let p = parse_secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").expect("valid");
        assert_eq!(p.key, b"12345678901234567890");
        assert_eq!((p.digits, p.period, p.algorithm), (6, 30, Algorithm::Sha1));
        // The 8-digit RFC value 94287082 truncated to 6 digits.
        assert_eq!(totp_code(&p, 59), "287082");
    }

    #[test]
    fn base32_is_lenient_about_case_spaces_and_padding() {
        let a = parse_secret("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").expect("valid");
        let b = parse_secret("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ====").expect("valid");
        assert_eq!(a, b);
    }

    #[test]
    fn otpauth_uri_parameters_are_honoured() {
        let p = parse_secret(
            "otpauth://totp/Example:alice%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example&algorithm=SHA256&digits=8&period=60",
        )
        .expect("valid");
        assert_eq!((p.algorithm, p.digits, p.period), (Algorithm::Sha256, 8, 60));
        // Same counter as t=59 with period 30? No: period 60 puts t=119 in counter 1.
        let p30 = TotpParams { period: 30, ..p.clone() };
        assert_eq!(totp_code(&p, 119), totp_code(&p30, 59));
    }

    #[test]
    fn bad_secrets_are_errors_that_do_not_quote_the_secret() {
        for bad in [
            "",
            "not base32 !!!",
            "otpauth://hotp/x?secret=GEZDGNBV",
            "otpauth://totp/x?digits=8",
            "otpauth://totp/x?secret=GEZDGNBV&digits=99",
            "otpauth://totp/x?secret=GEZDGNBV&algorithm=MD5",
            "otpauth://totp/x?secret=GEZDGNBV&period=0",
        ] {
            let err = parse_secret(bad).expect_err(bad);
            assert!(!bad.is_empty() && !err.0.contains("GEZDGNBV") || bad.is_empty());
        }
    }
}
