//! Bounds on the numbers a config file may hold. Each function reads an
//! optional number and refuses one outside its range; the TOML reader then
//! reports the refusal with the file, line and column of the value, like any
//! other config error.

use serde::{Deserialize, Deserializer, de::Error};

macro_rules! bounded {
    ($(#[$doc:meta])* $name:ident: $ty:ty, $lo:expr, $hi:expr) => {
        $(#[$doc])*
        pub fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$ty>, D::Error> {
            let value = Option::<$ty>::deserialize(d)?;
            match value {
                Some(v) if !($lo..=$hi).contains(&v) => Err(D::Error::custom(format!(
                    "{v} is out of range: use a value from {} to {}",
                    $lo, $hi
                ))),
                _ => Ok(value),
            }
        }
    };
}

bounded!(
    /// A wait in seconds: at least one, at most a day.
    seconds: u64, 1, 86_400
);
bounded!(
    /// A short wait for one of cairn's helpers (a formatter): one second
    /// to five minutes.
    helper_seconds: u64, 1, 300
);
bounded!(
    /// A size in MB: at least one, at most 16 GB.
    megabytes: u64, 1, 16_384
);
bounded!(
    /// Tries of a request: the first and up to 19 more.
    attempts: u32, 1, 20
);
bounded!(
    /// A delay in milliseconds, up to an hour.
    millis: u64, 0, 3_600_000
);
bounded!(
    /// A count of repeats, turns or agents.
    count: u32, 1, 100_000
);
bounded!(
    /// A count in a machine-sized number.
    count_usize: usize, 1, 1_000
);
bounded!(
    /// The fraction of the window at which cairn compacts.
    fraction: f64, 0.5, 0.95
);
bounded!(
    /// Bytes of instructions taken (up to 16 MB).
    instruction_bytes: usize, 0, 16 * 1024 * 1024
);
bounded!(
    /// A count of tokens (a window, an answer), up to a hundred million.
    tokens: u64, 0, 100_000_000
);
bounded!(
    /// Tokens of one answer.
    answer_tokens: u32, 1, 10_000_000
);
bounded!(
    /// A price in US dollars per million tokens.
    price: f64, 0.0, 100_000.0
);
bounded!(
    /// How many old log files are kept beside the current one.
    log_files: u32, 0, 100
);

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    struct T {
        #[serde(default, deserialize_with = "super::fraction")]
        f: Option<f64>,
        #[serde(default, deserialize_with = "super::seconds")]
        s: Option<u64>,
    }

    #[test]
    fn values_in_range_pass_and_others_are_refused_with_a_place() {
        let ok: T = toml::from_str("f = 0.8\ns = 30").expect("in range");
        assert_eq!((ok.f, ok.s), (Some(0.8), Some(30)));
        let none: T = toml::from_str("").expect("absent");
        assert_eq!((none.f, none.s), (None, None));
        let Err(e) = toml::from_str::<T>("f = 5.0") else {
            panic!("5.0 accepted");
        };
        let text = e.to_string();
        assert!(
            text.contains("5 is out of range: use a value from 0.5 to 0.95"),
            "{text}"
        );
        assert!(text.contains("line 1"), "{text}");
        let Err(e) = toml::from_str::<T>("f = 0.8\ns = 0") else {
            panic!("0 s accepted");
        };
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
