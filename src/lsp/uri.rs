//! `file://` URIs for paths and back, as language servers write them.

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path.
pub fn from_path(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path a `file://` URI names; `None` for any other scheme.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` names `/x` too.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(v) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_spaces_and_unicode_round_trip() {
        let p = Path::new("/tmp/a b/é#1.py");
        let uri = from_path(p);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%A9%231.py");
        assert_eq!(to_path(&uri).unwrap(), p);
        // Servers may encode fewer characters than cairn does.
        assert_eq!(
            to_path("file:///tmp/a b/x.py").unwrap(),
            Path::new("/tmp/a b/x.py")
        );
        assert_eq!(to_path("file://localhost/x").unwrap(), Path::new("/x"));
        assert_eq!(to_path("untitled:1"), None);
    }
}
