pub mod diff_view;
