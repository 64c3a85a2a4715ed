#!/usr/bin/env python3
"""`trnsim run --report`: every example kernel's report is one self-contained HTML page (no
scripts, no fetches), carries its sections and charts, and renders in a real headless Chromium
with charts that are not empty (coloured chart pixels in the screenshot) and no console error.

Usage: html_report_test.py TRNSIM SOURCE_DIR
Exit 77 (CTest SKIP_RETURN_CODE) with a message when Chromium is missing or cannot start; the
structural checks have run by then.
"""
import concurrent.futures
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

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


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, idat, width, height, colour, depth = 8, b"", 0, 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or colour not in (2, 6) or interlace:
                fail(f"{path}: unsupported PNG (depth {depth}, colour {colour})")
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        previous = line
    return width, height, rows, channels


def chart_pixels(path):
    """Pixels of the screenshot in one of the chart colours (within a small tolerance)."""
    width, height, rows, channels = png_pixels(path)
    count = 0
    for line in rows:
        for x in range(0, width * channels, channels):
            r, g, b = line[x], line[x + 1], line[x + 2]
            for cr, cg, cb in CHART_COLOURS:
                if abs(r - cr) < 24 and abs(g - cg) < 24 and abs(b - cb) < 24:
                    count += 1
                    break
    return count


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
        def screenshot(index_and_report):
            index, (kernel, page) = index_and_report
            png = page[:-5] + ".png"
            # Half scale: a quarter of the pixels to decode; lines stay 1 px wide.
            result = subprocess.run(
                [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
                 "--user-data-dir=" + os.path.join(scratch, f"profile{index}"),
                 "--force-device-scale-factor=0.5", "--window-size=1200,2400",
                 "--screenshot=" + png, "file://" + page],
                capture_output=True, text=True, timeout=120)
            return kernel, png, result

        first_kernel, first_png, first = screenshot((0, reports[0]))
        if not os.path.exists(first_png):
            print("SKIP: Chromium could not start: " + first.stderr.strip()[-500:])
            return SKIP
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            shots = [(first_kernel, first_png, first)] + list(
                pool.map(screenshot, list(enumerate(reports))[1:]))
        fewest = None
        for kernel, png, result in shots:
            if not os.path.exists(png):
                fail(f"{kernel}: no screenshot: {result.stderr[-500:]}")
            console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
            if console:
                fail(f"{kernel}: console messages: {console[:3]}")
            coloured = chart_pixels(png)
            # Legend swatches alone are about 100 such pixels at this scale.
            if coloured < 1000:
                fail(f"{kernel}: the charts look empty ({coloured} chart-coloured pixels)")
            fewest = coloured if fewest is None else min(fewest, coloured)
        print(f"chromium: {len(reports)} reports rendered with non-empty charts "
              f"(at least {fewest} chart-coloured pixels each)")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
