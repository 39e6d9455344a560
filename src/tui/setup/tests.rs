use super::*;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn typed(s: &mut Setup, text: &str) {
    for ch in text.chars() {
        assert_eq!(s.key(key(KeyCode::Char(ch))), None);
    }
}

#[test]
fn a_pasted_key_with_the_environments_base_url() {
    let mut s = Setup::new(vec![("anthropic", "http://127.0.0.1:9".into())]);
    assert_eq!(s.key(key(KeyCode::Enter)), None);
    // An empty key is not checked.
    assert_eq!(s.key(key(KeyCode::Enter)), None);
    assert!(
        s.error
            .as_deref()
            .unwrap_or("")
            .contains("Paste the API key")
    );
    s.paste("sk-test\n");
    let Some(SetupEvent::Check(a)) = s.key(key(KeyCode::Enter)) else {
        panic!("no check");
    };
    assert_eq!(a.choice.name, "anthropic");
    assert_eq!(a.base_url, "http://127.0.0.1:9");
    assert_eq!(a.key, KeyInput::Pasted("sk-test".into()));
    s.checking = true;
    s.checked(Err("the API key was refused".into()));
    assert_eq!(
        s.step,
        Step::Details,
        "the guide stays until a provider works"
    );
}

#[test]
fn a_variable_name_or_a_local_server() {
    let mut s = Setup::new(Vec::new());
    s.key(key(KeyCode::Enter));
    typed(&mut s, "$MY_KEY");
    let Some(SetupEvent::Check(a)) = s.key(key(KeyCode::Enter)) else {
        panic!("no check");
    };
    assert_eq!(a.key, KeyInput::Env("MY_KEY".into()));
    assert_eq!(s.key(key(KeyCode::Esc)), None);
    let custom = CHOICES.iter().position(|c| c.name == "custom").unwrap();
    for _ in 0..custom {
        s.key(key(KeyCode::Down));
    }
    s.key(key(KeyCode::Enter));
    s.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    typed(&mut s, "http://box:8000/v1");
    let Some(SetupEvent::Check(a)) = s.key(key(KeyCode::Enter)) else {
        panic!("no check");
    };
    assert_eq!((a.choice.name, a.key), ("custom", KeyInput::None));
    assert_eq!(a.base_url, "http://box:8000/v1");
    assert_eq!(s.key(key(KeyCode::Esc)), None);
    assert_eq!(s.key(key(KeyCode::Esc)), Some(SetupEvent::Quit));
}

#[test]
fn typing_after_an_error_clears_it() {
    // "✗ Paste the API key" stayed under a key already typed, until Enter.
    let mut s = Setup::new(vec![]);
    s.key(key(KeyCode::Enter));
    s.key(key(KeyCode::Enter));
    assert!(s.error.is_some());
    typed(&mut s, "sk");
    assert_eq!(s.error, None);
    s.key(key(KeyCode::Backspace));
    s.key(key(KeyCode::Backspace));
    s.key(key(KeyCode::Enter));
    assert!(s.error.is_some());
    s.paste("sk-test");
    assert_eq!(s.error, None);
}
