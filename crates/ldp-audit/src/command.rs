//! An external program as the audited client: one item per line in, one report per line
//! out.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::observation::parse_line;
use crate::{AuditError, Client, Observation, Shape};

/// Runs `sh -c COMMAND` once per batch: writes the batch's items, one decimal per line,
/// to its standard input, closes it, and reads one report per line from its standard
/// output (the forms of [`parse_line`]). The program must answer within `timeout`, exit
/// with status 0, and write exactly one report per item.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandClient {
    /// The command line, run by `sh -c`.
    pub command: String,
    /// The shape of its reports.
    pub shape: Shape,
    /// The domain size.
    pub k: u32,
    /// How long one batch may take.
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
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("could not start: {e}")))?;
        let deadline = Instant::now() + self.timeout;
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
        let mut stderr = child.stderr.take().expect("piped");
        let stderr_reader = thread::spawn(move || {
            let mut tail = String::new();
            let _ = stderr.by_ref().take(1 << 16).read_to_string(&mut tail);
            tail
        });
        let left = deadline.saturating_duration_since(Instant::now());
        let reports = match receiver.recv_timeout(left) {
            Ok(reports) => reports,
            Err(_) => {
                kill(&mut child);
                return Err(fail(format!(
                    "no complete answer within {} s (--timeout)",
                    self.timeout.as_secs_f64()
                )));
            }
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
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
        reports.map_err(fail)
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads and parses `expected` report lines; the error names the line.
fn read_reports(
    stdout: impl Read,
    shape: Shape,
    k: u32,
    expected: usize,
) -> Result<Vec<Observation>, String> {
    let mut reports = Vec::with_capacity(expected);
    for (n, line) in BufReader::new(stdout).lines().enumerate() {
        let line = line.map_err(|e| format!("output line {}: {e}", n + 1))?;
        if n >= expected {
            return Err(format!(
                "wrote more than {expected} reports for {expected} items (line {}: {line:?})",
                n + 1
            ));
        }
        let report = parse_line(&line, shape, k)
            .map_err(|reason| format!("output line {}: {reason} (the line: {line:?})", n + 1))?;
        reports.push(report);
    }
    if reports.len() < expected {
        return Err(format!(
            "wrote {} reports for {expected} items",
            reports.len()
        ));
    }
    Ok(reports)
}
