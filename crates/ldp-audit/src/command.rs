//! An external program as the audited client: one item per line in, one report per line
//! out.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
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
        let mut child = command
            .spawn()
            .map_err(|e| fail(format!("could not start: {e}")))?;
        let deadline = Instant::now().checked_add(self.timeout);
        let mut stdin = child.stdin.take().expect("piped");
        let text: String = items.iter().map(|x| format!("{x}\n")).collect();
        // Written by a thread: a client that answers line by line fills its output pipe
        // while we are still writing.
        let writer = thread::spawn(move || {
            // A client that exits early closes the pipe: what it wrote is checked instead.
            let _ = stdin.write_all(text.as_bytes());
        });
        let stdout = child.stdout.take().expect("piped");
        let (shape, k, expected) = (self.shape, self.k, items.len());
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let _ = sender.send(read_reports(stdout, shape, k, expected));
        });
        let stderr = child.stderr.take().expect("piped");
        let stderr_reader = thread::spawn(move || tail_of(stderr));
        let timed_out = || {
            format!(
                "no complete answer within {} s (--timeout)",
                self.timeout.as_secs_f64()
            )
        };
        let received = match deadline {
            Some(deadline) => {
                receiver.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            }
            None => receiver
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        let (reports, short) = match received {
            Ok(Ok(reports)) => (reports, None),
            // The output ended early: how the client ended says more (below).
            Ok(Err(Answer::Short(reason))) => (Vec::new(), Some(reason)),
            Ok(Err(Answer::Malformed(reason))) => {
                // The line is the error, not how the client ends once nobody reads it.
                kill(&mut child);
                return Err(fail(reason));
            }
            Err(_) => {
                kill(&mut child);
                return Err(fail(timed_out()));
            }
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if deadline.is_none_or(|d| Instant::now() < d) => {
                    thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    kill(&mut child);
                    return Err(fail(format!(
                        "did not exit within {} s (--timeout)",
                        self.timeout.as_secs_f64()
                    )));
                }
                Err(e) => return Err(fail(format!("could not wait for it: {e}"))),
            }
        };
        let _ = writer.join();
        let stderr = stderr_reader.join().unwrap_or_default();
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

/// Stops the client and whatever it started (its process group, on Unix).
fn kill(child: &mut Child) {
    #[cfg(unix)]
    {
        // The group's id is the shell's pid. `kill` of procps or the shell's built-in:
        // no unsafe code for a signal.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stderr(Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
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

/// Reads and parses `expected` report lines; the error names the line.
fn read_reports(
    stdout: impl Read,
    shape: Shape,
    k: u32,
    expected: usize,
) -> Result<Vec<Observation>, Answer> {
    let mut reports = Vec::with_capacity(expected);
    for (n, line) in BufReader::new(stdout).lines().enumerate() {
        let line = line.map_err(|e| Answer::Malformed(format!("output line {}: {e}", n + 1)))?;
        if n >= expected {
            return Err(Answer::Malformed(format!(
                "wrote more than {expected} reports for {expected} items (line {}: {line:?})",
                n + 1
            )));
        }
        let report = parse_line(&line, shape, k).map_err(|reason| {
            Answer::Malformed(format!(
                "output line {}: {reason} (the line: {line:?})",
                n + 1
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
