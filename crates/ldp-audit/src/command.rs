//! An external program as the audited client: one item per line in, one report per line
//! out.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use crate::observation::parse_line;
use crate::{AuditError, Client, Observation, Shape};

/// How much of a client's standard error an error message quotes (its end).
const STDERR_TAIL: usize = 4096;

/// Runs `sh -c COMMAND` once per batch: writes the batch's items, one decimal per line,
/// to its standard input, closes it, and reads one report per line from its standard
/// output (the forms of [`parse_line`]). The program must answer within `timeout`, exit
/// with status 0, and write exactly one report per item. On Unix the command runs in its
/// own process group, so that a timeout stops everything it started.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandClient {
    /// The command line, run by `sh -c`.
    pub command: String,
    /// The shape of its reports.
    pub shape: Shape,
    /// The domain size.
    pub k: u32,
    /// How long one batch may take (`Duration::MAX`: no limit).
    pub timeout: Duration,
}

impl Client for CommandClient {
    fn perturb(&self, items: &[u32]) -> Result<Vec<Observation>, AuditError> {
        let input = items.first().copied().unwrap_or(0);
        let fail = |reason: String| AuditError::Command {
            command: self.command.clone(),
            input,
            reason,
        };
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut client =
            Running::start(&mut command).map_err(|e| fail(format!("could not start: {e}")))?;
        let child = &mut client.child;
        let deadline = Instant::now().checked_add(self.timeout);
        let mut stdin = child.stdin.take().expect("piped");
        let text: String = items.iter().map(|x| format!("{x}\n")).collect();
        // Written by a thread: a client that answers line by line fills its output pipe
        // while we are still writing.
        thread::spawn(move || {
            // A client that exits early closes the pipe: what it wrote is checked instead.
            let _ = stdin.write_all(text.as_bytes());
        });
        let stdout = child.stdout.take().expect("piped");
        let (shape, k, expected) = (self.shape, self.k, items.len());
        let (sender, answer) = mpsc::channel();
        thread::spawn(move || {
            let _ = sender.send(read_reports(stdout, shape, k, expected));
        });
        let stderr = child.stderr.take().expect("piped");
        let (sender, said) = mpsc::channel();
        thread::spawn(move || {
            let _ = sender.send(tail_of(stderr));
        });
        let seconds = self.timeout.as_secs_f64();
        // Wait for the client to exit, stopping at once on a malformed line.
        let mut received = None;
        let status = loop {
            if received.is_none() {
                match answer.try_recv() {
                    // The line is the error, not how the client ends once nobody reads it.
                    Ok(Err(Answer::Malformed(reason))) => return Err(fail(reason)),
                    Ok(other) => received = Some(other),
                    Err(_) => {}
                }
            }
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if deadline.is_none_or(|d| Instant::now() < d) => {
                    thread::sleep(Duration::from_millis(2))
                }
                Ok(None) if received.is_none() => {
                    return Err(fail(format!(
                        "no complete answer within {seconds} s (--timeout)"
                    )));
                }
                Ok(None) => {
                    return Err(fail(format!("did not exit within {seconds} s (--timeout)")));
                }
                Err(e) => return Err(fail(format!("could not wait for it: {e}"))),
            }
        };
        // What it left running ends now: its output pipes then close.
        client.stop_group();
        let received = match received {
            Some(r) => r,
            None => match answer.recv_timeout(LINGER) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(fail(format!(
                        "its output stayed open {} s after it exited (held by a process it \
                         started outside its process group)",
                        LINGER.as_secs_f64()
                    )));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(fail("its output could not be read".to_owned()));
                }
            },
        };
        // Its stderr is quoted only when it fails: a success waits for nothing more.
        let stderr = if status.success() {
            String::new()
        } else {
            said.recv_timeout(LINGER).unwrap_or_default()
        };
        let (reports, short) = match received {
            Ok(reports) => (reports, None),
            // The output ended early: how the client ended says more (below).
            Err(Answer::Short(reason)) => (Vec::new(), Some(reason)),
            Err(Answer::Malformed(reason)) => return Err(fail(reason)),
        };
        if !status.success() {
            let stderr = stderr.trim();
            return Err(fail(if stderr.is_empty() {
                format!("exited with {status}")
            } else {
                format!("exited with {status}; it said: {stderr}")
            }));
        }
        match short {
            Some(reason) => Err(fail(reason)),
            None => Ok(reports),
        }
    }
}

/// How long output pipes may stay open once the client exited and its process group was
/// stopped (only a process that left the group can hold them).
const LINGER: Duration = Duration::from_secs(2);

/// The process groups of the clients running now, for [`stop_command_clients`].
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Set by [`stop_command_clients`]: no client starts after it.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Stops every external client running now and whatever each started, and every client
/// started later: for a front end's interrupt handler (each client runs in its own process
/// group, which a terminal's Ctrl-C does not reach).
pub fn stop_command_clients() {
    let groups = {
        let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        STOPPING.store(true, Ordering::SeqCst);
        running.clone()
    };
    for group in groups {
        kill_group(group);
    }
}

/// A client process: registered while it runs, and its whole process group killed when
/// this is dropped, on success, error and timeout alike.
struct Running {
    child: Child,
    group: u32,
}

impl Running {
    fn start(command: &mut Command) -> std::io::Result<Running> {
        // Spawned and registered under the lock that stop_command_clients takes, so that
        // no client starts unseen while the front end stops.
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        if STOPPING.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("stopped"));
        }
        let child = command.spawn()?;
        let group = child.id();
        running.push(group);
        Ok(Running { child, group })
    }

    /// Kills what is left of the group (its background processes). The group's id is
    /// the shell's pid, which Linux does not reuse before cycling through every pid.
    fn stop_group(&mut self) {
        kill_group(self.group);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        kill_group(self.group);
        let _ = self.child.kill();
        let _ = self.child.wait();
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&g| g != self.group);
    }
}

/// Sends SIGKILL to a process group (on Unix; elsewhere only the child is stopped),
/// through the shell's `kill`, which every system that runs `sh -c` has: no unsafe code
/// for a signal.
fn kill_group(group: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("sh")
            .args(["-c", "kill -s KILL -- \"-$1\" 2>/dev/null", "sh"])
            .arg(group.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = group;
}

/// Reads a stream to its end, keeping its last [`STDERR_TAIL`] bytes: a client that logs
/// a lot is never blocked on a full pipe.
fn tail_of(mut stream: impl Read) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    if tail.len() > STDERR_TAIL {
        tail.drain(..tail.len() - STDERR_TAIL);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// What was wrong with a client's output.
enum Answer {
    /// A line that is not a report, or one line too many.
    Malformed(String),
    /// The output ended before every item had its report.
    Short(String),
}

/// The longest line a report of `shape` over `k` items can sensibly take: four times its
/// longest plain or JSON form plus 256 bytes (room for spaces and number spellings). A
/// longer line is refused before it is read whole, so a runaway client cannot exhaust
/// memory.
pub fn client_line_cap(shape: Shape, k: u32) -> usize {
    let k = k as usize;
    let digits = k.saturating_sub(1).max(1).ilog10() as usize + 1;
    let longest = match shape {
        Shape::Value | Shape::Hashed { .. } => 32,
        // Every item listed, or k digits with separators.
        Shape::Set => 16 + k * (digits + 1).max(2),
        // k numbers, each in at most 24 characters and a separator.
        Shape::Vector => 16 + k * 25,
    };
    longest.saturating_mul(4).saturating_add(256)
}

/// At most 40 characters of `text`, quoted, for error messages.
fn quote(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{:?}...", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// At most 200 characters of a reason, whose quoted pieces come from the client's line.
fn clip(reason: String) -> String {
    match reason.char_indices().nth(200) {
        Some((cut, _)) => format!("{}...", &reason[..cut]),
        None => reason,
    }
}

/// Reads and parses `expected` report lines, each of at most [`client_line_cap`] bytes; the
/// error names the line.
fn read_reports(
    stdout: impl Read,
    shape: Shape,
    k: u32,
    expected: usize,
) -> Result<Vec<Observation>, Answer> {
    let cap = client_line_cap(shape, k);
    let mut reader = BufReader::new(stdout);
    let mut reports = Vec::with_capacity(expected);
    let mut bytes = Vec::new();
    for n in 1.. {
        bytes.clear();
        // The cap plus a CRLF's two bytes: a line of `cap` bytes is taken with either end.
        let read = (&mut reader)
            .take(cap as u64 + 2)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| Answer::Malformed(format!("output line {n}: {e}")))?;
        if read == 0 {
            break;
        }
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        if bytes.len() > cap {
            return Err(Answer::Malformed(format!(
                "output line {n} is longer than {cap} bytes, more than any {} report over \
                 k = {k} takes (it starts {})",
                shape.name(),
                quote(&String::from_utf8_lossy(&bytes[..64.min(bytes.len())]))
            )));
        }
        let line = std::str::from_utf8(&bytes).map_err(|_| {
            Answer::Malformed(format!(
                "output line {n} is not UTF-8 (it starts {})",
                quote(&String::from_utf8_lossy(&bytes[..64.min(bytes.len())]))
            ))
        })?;
        if n > expected {
            return Err(Answer::Malformed(format!(
                "wrote more than {expected} reports for {expected} items (line {n}: {})",
                quote(line)
            )));
        }
        let report = parse_line(line, shape, k).map_err(|reason| {
            Answer::Malformed(format!(
                "output line {n}: {} (the line: {})",
                clip(reason),
                quote(line)
            ))
        })?;
        reports.push(report);
    }
    if reports.len() < expected {
        return Err(Answer::Short(format!(
            "wrote {} reports for {expected} items",
            reports.len()
        )));
    }
    Ok(reports)
}
