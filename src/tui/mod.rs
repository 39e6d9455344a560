pub mod highlight;
pub mod markdown;
pub mod theme;
pub mod widgets;
