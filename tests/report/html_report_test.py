#!/usr/bin/env python3
"""`trnsim run --report`: every example kernel's report is one self-contained HTML page (no
scripts, no fetches), carries its sections and charts, and renders in a real headless Chromium
(one browser for every page, driven over the DevTools protocol) with charts that are not empty
(coloured chart pixels in the screenshot) and no console message, exception or log entry.

Usage: html_report_test.py TRNSIM SOURCE_DIR
Exit 77 (CTest SKIP_RETURN_CODE) with a message when Chromium is missing or cannot start; the
structural checks have run by then.
"""
import base64
import glob
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

import numpy
import PIL.Image

SKIP = 77
# The chart palette (util/svg_chart.cpp, Okabe-Ito): the first three line/bar colours.
CHART_COLOURS = [(0x00, 0x72, 0xB2), (0xE6, 0x9F, 0x00), (0x00, 0x9E, 0x73)]
FORBIDDEN = ["<script", "src=", "href=", "@import", "url("]


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run_report(trnsim, kernel, out, extra=()):
    """Runs the kernel on trn2 (trn3 when trn2 lacks a feature it needs), writing `out`."""
    for config in ("trn2", "trn3"):
        result = subprocess.run([trnsim, "run", kernel, "-c", config, "--quiet", "--report", out,
                                 *extra], capture_output=True, text=True, timeout=300)
        if result.returncode == 0:
            return config
        if result.returncode != 2:
            fail(f"{kernel}: exit {result.returncode}: {result.stderr}")
    fail(f"{kernel}: runs on neither trn2 nor trn3: {result.stderr}")


def check_structure(path, kernel, with_source_lines):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    if not page.startswith("<!DOCTYPE html>") or not page.rstrip().endswith("</html>"):
        fail(f"{kernel}: not a complete HTML page")
    for token in FORBIDDEN:
        if token in page:
            fail(f"{kernel}: the page has '{token}': it must not load anything")
    for section in ("id=\"summary\"", "id=\"utilisation\"", "id=\"roofline\"", "id=\"stalls\""):
        if section not in page:
            fail(f"{kernel}: no section {section}")
    if with_source_lines and "id=\"source-lines\"" not in page:
        fail(f"{kernel}: an NKI kernel's report has no source-line table")
    if page.count("<svg") < 2:
        fail(f"{kernel}: expected at least the utilisation and engine charts")


def png_pixels(data, name):
    """Pixels of a PNG (bytes) as a numpy array [height, width, 3] (RGB), decoded by Pillow."""
    try:
        return numpy.asarray(PIL.Image.open(io.BytesIO(data)).convert("RGB"))
    except PIL.UnidentifiedImageError:
        fail(f"{name}: not a PNG")


def chart_pixels(data, name):
    """Pixels of a PNG screenshot in one of the chart colours (within a small tolerance)."""
    rgb = png_pixels(data, name).astype(numpy.int16)
    coloured = numpy.zeros(rgb.shape[:2], dtype=bool)
    for colour in CHART_COLOURS:
        coloured |= (numpy.abs(rgb - numpy.array(colour, dtype=numpy.int16)) < 24).all(axis=2)
    return int(coloured.sum())


class Chromium:
    """A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
    JSON messages ending in a NUL byte, commands on the browser's fd 3, replies and events on
    its fd 4): one browser renders every page."""

    def __init__(self, executable, profile):
        # Chromium's own messages go to a file: a pipe nobody reads could fill and stall it.
        self.log = open(profile + ".log", "w+b")
        commands_read, self.commands = os.pipe()
        self.replies, replies_write = os.pipe()

        def give_the_pipes_to_chromium():
            # Duplicates first: dup2 onto the same number would keep close-on-exec.
            commands, replies = os.dup(commands_read), os.dup(replies_write)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        self.process = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--hide-scrollbars", "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "about:blank"],
            close_fds=False, preexec_fn=give_the_pipes_to_chromium,
            stdout=subprocess.DEVNULL, stderr=self.log)
        os.close(commands_read)
        os.close(replies_write)
        self.buffer = b""
        self.last_id = 0
        self.events = []

    def receive(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                raise TimeoutError(f"no message from Chromium in {timeout} s")
            chunk = os.read(self.replies, 1 << 20)
            if not chunk:
                self.log.seek(0)
                raise EOFError("Chromium closed its pipe: "
                               + self.log.read().decode(errors="replace")[-500:])
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=60):
        """Sends a command and returns its result; events arriving meanwhile are kept."""
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive(timeout)
            if reply.get("id") == self.last_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event, session, timeout=60):
        while True:
            for index, message in enumerate(self.events):
                if message.get("method") == event and message.get("sessionId") == session:
                    return self.events.pop(index)
            self.events.append(self.receive(timeout))

    def open_tab(self):
        """A tab 1200 x 2400 CSS pixels at half scale (a quarter of the pixels to decode; lines
        stay 1 px wide), reporting console messages, exceptions and log entries."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1200, "height": 2400, "deviceScaleFactor": 0.5, "mobile": False},
                  session=session)
        return session

    def screenshot(self, session, path):
        """(PNG bytes of the page at `path` once loaded, the messages it logged)."""
        self.events.clear()
        self.call("Page.navigate", {"url": "file://" + path}, session=session)
        self.wait_for("Page.loadEventFired", session)
        # optimizeForSpeed: the fastest PNG encoding Chromium has.
        shot = self.call("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True},
                         session=session)
        logged = [message for message in self.events
                  if message.get("method") in ("Runtime.consoleAPICalled",
                                               "Runtime.exceptionThrown", "Log.entryAdded")]
        return base64.b64decode(shot["data"]), logged

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (TimeoutError, EOFError, OSError, RuntimeError):
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.commands)
        os.close(self.replies)
        self.log.close()


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def main():
    trnsim, source = sys.argv[1], sys.argv[2]
    scratch = tempfile.mkdtemp(prefix="trnsim-html-report-")
    try:
        reports = []
        for kernel in sorted(glob.glob(os.path.join(source, "examples/kernels/*.json"))):
            out = os.path.join(scratch, os.path.basename(kernel)[:-5] + ".html")
            run_report(trnsim, kernel, out)
            check_structure(out, kernel, False)
            reports.append((kernel, out))
        nki = os.path.join(source, "examples/nki/vector_add.py") + "::vector_add"
        out = os.path.join(scratch, "nki_vector_add.html")
        run_report(trnsim, nki, out,
                   ["--input", "a=float32[8,128,2048]", "--input", "b=float32[8,128,2048]"])
        check_structure(out, nki, True)
        reports.append((nki, out))
        # compare --report: the same kinds of charts across configs.
        compared = os.path.join(source, "examples/kernels/matmul_tiled.json")
        out = os.path.join(scratch, "compare.html")
        result = subprocess.run([trnsim, "compare", compared, "--configs", "trn1,trn2,trn3",
                                 "--quiet", "--report", out], capture_output=True, text=True,
                                timeout=300)
        if result.returncode != 0:
            fail(f"compare --report: exit {result.returncode}: {result.stderr}")
        with open(out, encoding="utf-8") as f:
            page = f.read()
        for token in FORBIDDEN:
            if token in page:
                fail(f"compare report: has '{token}'")
        for section in ("id=\"table\"", "id=\"time\"", "id=\"engines\"", "id=\"roofline\"",
                        "id=\"stalls\""):
            if section not in page:
                fail(f"compare report: no section {section}")
        reports.append(("compare " + compared, out))
        # sweep report: the example sweep's metrics across its points.
        spec = os.path.join(source, "examples/sweeps/vector_add_dma.json")
        results = os.path.join(scratch, "sweep.jsonl")
        out = os.path.join(scratch, "sweep.html")
        for command in (["sweep", spec, "-j", "2", "--quiet", "-o", results],
                        ["sweep", "report", results, "-o", out]):
            result = subprocess.run([trnsim, *command], capture_output=True, text=True,
                                    timeout=300)
            if result.returncode != 0:
                fail(f"{' '.join(command)}: exit {result.returncode}: {result.stderr}")
        with open(out, encoding="utf-8") as f:
            page = f.read()
        for token in FORBIDDEN:
            if token in page:
                fail(f"sweep report: has '{token}'")
        if page.count("<svg") < 2 or "id=\"points\"" not in page:
            fail("sweep report: expected metric charts and the points table")
        reports.append(("sweep report " + spec, out))
        print(f"structure: {len(reports)} reports ok")

        chromium = find_chromium()
        if chromium is None:
            print("SKIP: no Chromium (Debian package 'chromium'): the rendering was not checked")
            return SKIP
        try:
            browser = Chromium(chromium, os.path.join(scratch, "profile"))
            session = browser.open_tab()
        except (TimeoutError, EOFError, OSError, RuntimeError) as error:
            print(f"SKIP: Chromium could not start: {error}")
            return SKIP
        fewest = None
        try:
            for kernel, page in reports:
                png, logged = browser.screenshot(session, page)
                if logged:
                    fail(f"{kernel}: the page logged messages: {logged[:3]}")
                coloured = chart_pixels(png, kernel)
                # Legend swatches alone are about 100 such pixels at this scale.
                if coloured < 1000:
                    fail(f"{kernel}: the charts look empty ({coloured} chart-coloured pixels)")
                fewest = coloured if fewest is None else min(fewest, coloured)
        finally:
            browser.close()
        print(f"chromium: {len(reports)} reports rendered with non-empty charts "
              f"(at least {fewest} chart-coloured pixels each)")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
