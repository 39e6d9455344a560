//! The full-screen interface.

pub mod fuzzy;
pub mod slash;
pub mod widgets;
