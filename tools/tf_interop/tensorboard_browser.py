"""TensorBoard on a model_dir, and Debian's headless Chromium looking at it.

Used by check.py (the TensorBoard check of the interop check) and on its own
to take the README's pictures of a run:

  ~/.cache/towerflow/tf_interop_venv/bin/python tools/tf_interop/tensorboard_browser.py \\
      /tmp/cifar10_train docs/images

starts `tensorboard --logdir MODEL_DIR` on a free port and, through
chromedriver (W3C WebDriver over HTTP, no Selenium), shows the Time Series
dashboard filtered to the `loss` tag -- waiting until its card's table shows
the last step's value -- and the Graphs dashboard -- waiting until the tower
boxes are drawn --, and saves both as PNG (tensorboard_loss.png,
tensorboard_graph.png).
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

# A page that has not shown what is waited for in this long is a failure.
DEADLINE_SECONDS = 120


def get_json(url, data=None):
    with urllib.request.urlopen(url, data=data) as response:
        return json.loads(response.read())


def get_text(url):
    with urllib.request.urlopen(url) as response:
        return response.read().decode()


def png_pixels(data):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG
    without interlacing (what Chromium's screenshots are)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            depth, color, interlace = body[8], body[9], body[12]
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"PNG of depth {depth}, color type {color}, interlace {interlace}")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


class TensorBoard:
    """`tensorboard --logdir` on a free port of 127.0.0.1; .url once it serves."""

    def __init__(self, logdir):
        binary = os.path.join(os.path.dirname(sys.executable), "tensorboard")
        self.process = subprocess.Popen(
            [binary, "--logdir", logdir, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log = []
        # TensorBoard prints its address once it listens.
        for line in self.process.stdout:
            self.log.append(line)
            match = re.search(r"TensorBoard \S+ at (http://\S+?)/? ", line)
            if match:
                self.url = match.group(1)
                break
        else:
            raise RuntimeError("tensorboard exited without serving:\n" + "".join(self.log))

    def close(self):
        self.process.terminate()
        self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """Headless Chromium through chromedriver's W3C WebDriver protocol."""

    def __init__(self, width=1600, height=1000):
        driver = shutil.which("chromedriver")
        chromium = shutil.which("chromium")
        if driver is None or chromium is None:
            raise FileNotFoundError("chromium and chromedriver (Debian: chromium chromium-driver)")
        self.base = f"http://127.0.0.1:{free_port()}"
        self.driver = subprocess.Popen([driver, "--port=" + self.base.rsplit(":", 1)[1]],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # chromedriver says so once it listens.
        for line in self.driver.stdout:
            if "started successfully" in line:
                break
        else:
            raise RuntimeError("chromedriver exited")
        options = {"binary": chromium,
                   "args": ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--window-size={width},{height}"]}
        self.session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})["sessionId"]

    def call(self, method, path, body=None):
        request = urllib.request.Request(
            self.base + path, method=method, headers={"Content-Type": "application/json"},
            data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"WebDriver {method} {path}: {e.read().decode()}") from None

    def command(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def open(self, url):
        self.command("POST", "/url", {"url": url})

    def text(self):
        """The page's text, inside shadow roots too (Polymer dashboards)."""
        return self.command("POST", "/execute/sync", {"args": [], "script": """
            const parts = [];
            (function walk(root) {
              for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
              parts.push(root.body ? root.body.innerText : root.textContent);
            })(document);
            return parts.join('\\n');"""})

    def type_into(self, css, text):
        element = self.command("POST", "/element", {"using": "css selector", "value": css})
        key = next(iter(element.values()))
        self.command("POST", f"/element/{key}/value", {"text": text})

    def wait_for(self, what, predicate):
        """Polls the page's text until predicate(text) holds; raises after the deadline."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            text = self.text()
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"the page never showed {what}; it shows:\n{text[:2000]}")
            time.sleep(0.2)

    def wait_for_element(self, css):
        script = "return document.querySelector(arguments[0]) !== null;"
        self.wait_for(css, lambda _: self.command("POST", "/execute/sync",
                                                  {"script": script, "args": [css]}))

    def screenshot(self, path=None):
        png = base64.b64decode(self.command("GET", "/screenshot"))
        if path is not None:
            with open(path, "wb") as f:
                f.write(png)
        return png

    def wait_for_line(self, css):
        """Waits until the canvas `css` (a chart TensorBoard draws with WebGL,
        out of the DOM's sight) shows a run's line: pixels of a saturated
        dark blue, the first run's colour, not the greys of grid and text."""
        script = """const r = document.querySelector(arguments[0]).getBoundingClientRect();
                    return [r.left, r.top, r.width, r.height, window.devicePixelRatio];"""

        def drawn(_):
            left, top, w, h, scale = self.command("POST", "/execute/sync",
                                                  {"script": script, "args": [css]})
            _, _, channels, rows = png_pixels(self.screenshot())
            count = 0
            for y in range(int(top * scale), int((top + h) * scale)):
                row = rows[y]
                for x in range(int(left * scale), int((left + w) * scale)):
                    red, blue = row[x * channels], row[x * channels + 2]
                    count += red < 140 and blue - red >= 24
            return count >= 30

        self.wait_for(f"a line in {css}", drawn)

    def close(self):
        try:
            self.call("DELETE", f"/session/{self.session}")
        finally:
            self.driver.terminate()
            self.driver.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def show_loss_and_graph(tensorboard_url, out_dir, last_step, last_loss, tower="tower_1"):
    """The Time Series dashboard filtered to `loss`, once its card alone is
    left and its table shows `last_step` and `last_loss` (to TensorBoard's
    rounding), and the Graphs dashboard once `tower` is drawn; each saved as
    a PNG in out_dir. Returns the two paths."""
    os.makedirs(out_dir, exist_ok=True)
    loss_png = os.path.join(out_dir, "tensorboard_loss.png")
    graph_png = os.path.join(out_dir, "tensorboard_graph.png")
    def shows_last_loss(text):
        # The card's table: run ".", smoothed, value, step, relative time.
        # Numbers as TensorBoard prints them: "1,410".
        row = re.search(r"Relative\s+\.\s+(\S+)\s+(\S+)\s+([\d,]+)\s", text)
        if row is None or "conv1" in text:
            return False
        step, value = int(row.group(3).replace(",", "")), float(row.group(2).replace(",", ""))
        return step == last_step and abs(value - last_loss) <= 1e-3 * max(1.0, abs(last_loss))

    with Browser() as browser:
        browser.open(tensorboard_url + "/#timeseries")
        tag_filter = "input[placeholder^='Filter tags']"
        browser.wait_for_element(tag_filter)
        browser.type_into(tag_filter, "^loss$\ue00c")  # Escape closes the suggestions
        browser.wait_for(f"the loss card alone, at step {last_step} with value {last_loss:.5g}",
                         shows_last_loss)
        browser.wait_for_line("scalar-card canvas")
        browser.screenshot(loss_png)
        browser.open(tensorboard_url + "/#graphs&run=.")
        browser.wait_for(f"the graph's {tower}", lambda t: tower in t)
        browser.screenshot(graph_png)
    return loss_png, graph_png


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    logdir, out_dir = sys.argv[1:]
    with TensorBoard(logdir) as tensorboard:
        points = get_json(tensorboard.url + "/data/plugin/scalars/scalars?" +
                          urllib.parse.urlencode({"run": ".", "tag": "loss"}))
        _, step, loss = points[-1]
        for path in show_loss_and_graph(tensorboard.url, out_dir, step, loss):
            print(path)


if __name__ == "__main__":
    main()
