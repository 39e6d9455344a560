//! A dialog's line of keys fitted to its width: the keys are given most
//! useful first, and those that do not fit are left out whole (never cut
//! mid-word), while the closing ones (how to leave, how to see every key)
//! always stay.

/// `parts` then `tail`, joined by " · ", dropping the last of `parts` until
/// the line fits in `width` columns.
pub fn fit(parts: &[String], tail: &[String], width: usize) -> String {
    let mut n = parts.len();
    loop {
        let line = parts[..n]
            .iter()
            .chain(tail)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" · ");
        if n == 0 || crate::text::width(&line) <= width {
            return line;
        }
        n -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn drops_whole_keys_from_the_end_and_keeps_the_tail() {
        let parts = s(&["n/p hunk", "Space accept", "t layout"]);
        let tail = s(&["Esc deny"]);
        assert_eq!(
            fit(&parts, &tail, 80),
            "n/p hunk · Space accept · t layout · Esc deny"
        );
        assert_eq!(fit(&parts, &tail, 35), "n/p hunk · Space accept · Esc deny");
        assert_eq!(fit(&parts, &tail, 3), "Esc deny");
    }
}
