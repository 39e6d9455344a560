pub mod picker;
pub mod session_browser;
