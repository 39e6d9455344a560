//! The daemons a real desktop has, for the hostile containment suite: an
//! attacker's TCP listener, Unix-socket servers (a pathname one and an
//! abstract one) that record what reaches them, a redirecting web server, a
//! tmux server and an ssh-agent. Each lives as long as its value.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Record {
    bytes: Mutex<Vec<u8>>,
    connections: AtomicUsize,
}

/// Reads each connection to its end (or 2 s), answering a small HTTP 200.
fn serve<S: Read + Write>(mut s: S, rec: &Record) {
    rec.connections.fetch_add(1, Ordering::SeqCst);
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        rec.bytes.lock().unwrap().extend_from_slice(&buf[..n]);
        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            break;
        }
    }
}

/// A listener standing in for the attacker: records every byte.
pub struct TcpSink {
    pub port: u16,
    rec: Arc<Record>,
}

impl TcpSink {
    pub fn start(ip: &str) -> TcpSink {
        let l = std::net::TcpListener::bind((ip, 0)).expect("bind the attacker's listener");
        let port = l.local_addr().unwrap().port();
        let rec = Arc::new(Record::default());
        let r = rec.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let r = r.clone();
                std::thread::spawn(move || serve(s, &r));
            }
        });
        TcpSink { port, rec }
    }

    pub fn received(&self) -> String {
        String::from_utf8_lossy(&self.rec.bytes.lock().unwrap()).into_owned()
    }

    pub fn connections(&self) -> usize {
        self.rec.connections.load(Ordering::SeqCst)
    }
}

/// A web server on 127.0.0.1 whose every answer redirects to `to`.
pub fn redirector(to: String) -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = s.write_all(reply.as_bytes());
        }
    });
    port
}

/// A Unix-socket server (pathname or abstract) that records what reaches it.
pub struct UnixSink {
    rec: Arc<Record>,
}

impl UnixSink {
    pub fn at_path(path: &Path) -> UnixSink {
        let l = std::os::unix::net::UnixListener::bind(path).expect("bind a unix socket");
        Self::run(l)
    }

    pub fn abstract_named(name: &str) -> UnixSink {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let l =
            std::os::unix::net::UnixListener::bind_addr(&addr).expect("bind an abstract socket");
        Self::run(l)
    }

    fn run(l: std::os::unix::net::UnixListener) -> UnixSink {
        let rec = Arc::new(Record::default());
        let r = rec.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let r = r.clone();
                std::thread::spawn(move || serve(s, &r));
            }
        });
        UnixSink { rec }
    }

    pub fn connections(&self) -> usize {
        self.rec.connections.load(Ordering::SeqCst)
    }

    pub fn received(&self) -> String {
        String::from_utf8_lossy(&self.rec.bytes.lock().unwrap()).into_owned()
    }
}

/// A tmux server on its own socket, started with the person's environment
/// (their API key included, as a real login shell's tmux has it).
pub struct Tmux {
    pub socket: PathBuf,
}

impl Tmux {
    pub fn start(socket: &Path, home: &Path, env: &[(String, String)]) -> Tmux {
        let status = Command::new("tmux")
            .args(["-S"])
            .arg(socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "person",
                "sleep 600",
            ])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("TERM", "xterm-256color")
            .envs(env.iter().cloned())
            .current_dir(home)
            .status()
            .expect("start tmux");
        assert!(status.success(), "tmux did not start");
        Tmux {
            socket: socket.to_path_buf(),
        }
    }

    /// The value of `TMUX` a shell inside this server sees.
    pub fn env_value(&self) -> String {
        format!("{},1,0", self.socket.display())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

/// An ssh-agent holding a throwaway key.
pub struct SshAgent {
    pub socket: PathBuf,
    pid: i32,
}

impl SshAgent {
    pub fn start(dir: &Path) -> SshAgent {
        let socket = dir.join("agent.sock");
        let out = Command::new("ssh-agent")
            .arg("-a")
            .arg(&socket)
            .arg("-s")
            .output()
            .expect("start ssh-agent");
        let text = String::from_utf8_lossy(&out.stdout);
        let pid = text
            .split("SSH_AGENT_PID=")
            .nth(1)
            .and_then(|s| s.split(';').next())
            .and_then(|s| s.parse().ok())
            .expect("ssh-agent's pid");
        let key = dir.join("agent_key");
        let made = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "throwaway", "-f"])
            .arg(&key)
            .status()
            .expect("ssh-keygen");
        assert!(made.success());
        let add = Command::new("ssh-add")
            .arg(&key)
            .env("SSH_AUTH_SOCK", &socket)
            .stderr(Stdio::null())
            .status()
            .expect("ssh-add");
        assert!(add.success());
        SshAgent { socket, pid }
    }

    /// The base64 body of the agent's public key: what a caller of the
    /// agent learns.
    pub fn public_blob(&self) -> String {
        let pubkey = std::fs::read_to_string(self.socket.with_file_name("agent_key.pub")).unwrap();
        pubkey.split_whitespace().nth(1).unwrap().to_string()
    }
}

impl Drop for SshAgent {
    fn drop(&mut self) {
        // SAFETY: a plain kill of the agent this value started.
        unsafe {
            libc::kill(self.pid, libc::SIGTERM);
        }
    }
}
