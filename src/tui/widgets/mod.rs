pub mod picker;
