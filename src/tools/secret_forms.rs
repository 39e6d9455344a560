//! The simple transforms of a secret an attacker uses to get it past a
//! plain match — reversed, hex, base64 — so redaction catches those too.
//! Base64 depends on where the value falls in the encoded text: for each of
//! the three byte alignments the characters that only the value's own
//! bytes decide are a fixed string, and that is what is matched.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE};

/// The shortest transformed form worth matching: shorter ones would match
/// by chance.
const MIN_FORM_LEN: usize = 10;

/// `(form, label)` for each transform of `value` named `name`.
pub fn forms(value: &str, name: &str) -> Vec<(String, String)> {
    let mut out = vec![
        (value.chars().rev().collect(), format!("{name}, reversed")),
        (hex(value, false), format!("{name}, hex")),
        (hex(value, true), format!("{name}, hex")),
    ];
    for engine in [&STANDARD, &URL_SAFE] {
        for pad in 0..3 {
            out.push((
                base64_core(engine, value.as_bytes(), pad),
                format!("{name}, base64"),
            ));
        }
    }
    out.retain(|(form, _)| form.len() >= MIN_FORM_LEN && form != value);
    out
}

fn hex(value: &str, upper: bool) -> String {
    value
        .bytes()
        .map(|b| {
            if upper {
                format!("{b:02X}")
            } else {
                format!("{b:02x}")
            }
        })
        .collect()
}

/// The characters of the base64 of `bytes` preceded by `pad` other bytes
/// that depend on `bytes` alone.
fn base64_core(engine: &base64::engine::GeneralPurpose, bytes: &[u8], pad: usize) -> String {
    let mut raw = vec![0u8; pad];
    raw.extend_from_slice(bytes);
    let enc = engine.encode(&raw);
    // Character i carries bits [6i, 6i + 6); the value's bits are
    // [8 pad, 8 (pad + n)).
    let first = (8 * pad).div_ceil(6);
    let last = 8 * (pad + bytes.len()) / 6;
    enc.get(first..last).unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_found_wherever_it_falls() {
        let secret = "CANARY0123456789abcdef";
        let forms = forms(secret, "K");
        let has = |text: &str| forms.iter().any(|(f, _)| text.contains(f.as_str()));
        assert!(has(&secret.chars().rev().collect::<String>()));
        assert!(has(&hex(secret, false)));
        for prefix in ["", "a", "ab", "abc", "secret = "] {
            for suffix in ["", "\n", "xy"] {
                let text = format!("{prefix}{secret}{suffix}");
                assert!(
                    has(&STANDARD.encode(text.as_bytes())),
                    "{prefix:?} {suffix:?}"
                );
                assert!(
                    has(&URL_SAFE.encode(text.as_bytes())),
                    "{prefix:?} {suffix:?}"
                );
            }
        }
        assert!(!has("an ordinary line of output with nothing in it"));
    }
}
