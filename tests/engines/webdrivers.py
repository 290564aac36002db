"""Phones in WebKit and Firefox, Debian's own builds, behind one small interface.

WebKit is Safari's engine on the table's iPhones: Debian's WebKitWebDriver drives its
MiniBrowser through Selenium, on an X server of the test process's own (Xvfb). Firefox
speaks WebDriver BiDi, the W3C protocol, by itself once started with
--remote-debugging-port: a few of its commands over a websocket (``Bidi``) drive it
without geckodriver, which Debian does not package and Selenium would download. Each
phone has its own cookies: a WebKit session each; a Firefox user context each, in one
browser. Playwright's own WebKit and Firefox builds are downloads too, so not used.

A ``Phone`` opens pages, taps, types (real key presses, Enter included) and runs a
function in the page; ``wait_until`` polls a condition in the page with Selenium's
WebDriverWait. Elements are found by CSS or, for a button by its words, by XPath.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.client_config import ClientConfig
from selenium.webdriver.remote.remote_connection import RemoteConnection
from selenium.webdriver.support.wait import WebDriverWait
from websocket import create_connection

FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
# WebKitGTK's small browser, which its WebDriver starts (libwebkit2gtk-4.1-0 ships it).
MINIBROWSER = next(
    iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-4.1/MiniBrowser"))),
    Path("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"),
)
XVFB = "/usr/bin/Xvfb"
PHONE = (390, 844)
TV = (1280, 720)
WAIT = 30  # seconds: a stream to a server just started may take a while (test_browser_push)


def xpath_button(words: str) -> str:
    """The XPath of a button whose words begin with ``words`` (a screen reader may hear
    more: "Rematch · Match 1")."""
    return f'//button[starts-with(normalize-space(), "{words}")]'


def locate(selector: str) -> tuple[str, str]:
    """(kind, value) of a selector: XPath when it starts with "/", else CSS."""
    return ("xpath", selector) if selector.startswith("/") else ("css", selector)


class Phone:
    """What a test does on a phone, in any engine."""

    engine = ""

    def open(self, url: str) -> None:
        raise NotImplementedError

    def run(self, body: str, *args) -> Any:
        """Run ``body`` (a function's body, its arguments in ``arguments``) in the page."""
        raise NotImplementedError

    def tap(self, selector: str) -> None:
        raise NotImplementedError

    def type(self, selector: str, text: str, enter: bool = True) -> None:
        """Type ``text`` into the field with real key presses, then Enter (``enter``)."""
        raise NotImplementedError

    def resize(self, size: tuple[int, int]) -> None:
        raise NotImplementedError

    def url(self) -> str:
        return self.run("return location.href")

    def wait_until(self, condition: str, what: str, *args) -> Any:
        """Wait until the JavaScript expression ``condition`` (``arguments`` at hand) is
        truthy in the page; its value. A page on its way (a navigation) is looked at
        again; the message says what was waited for, in which engine, and the page."""

        def holds(phone):
            try:
                return phone.run(f"return {condition}", *args)
            except (WebDriverException, BidiError):  # the page is being replaced
                return False

        try:
            return WebDriverWait(self, WAIT, poll_frequency=0.1).until(holds)
        except WebDriverException as error:
            raise AssertionError(f"{self.engine}: {what} did not happen: {self.state()}") from error

    def state(self) -> str:
        """Where the phone is and what its page says, for a failure's message."""
        try:
            return self.run("return location.href + ': ' + document.body.innerText.slice(0, 600)")
        except (WebDriverException, BidiError) as error:
            return f"(no page: {error})"

    def wait_for(self, selector: str) -> None:
        """Wait until the element is on the page and shown."""
        kind, value = locate(selector)
        find = (
            "document.evaluate(arguments[0], document, null, 9, null).singleNodeValue"
            if kind == "xpath"
            else "document.querySelector(arguments[0])"
        )
        self.wait_until(f"(e => e && e.checkVisibility())({find})", f"{selector} shown", value)

    def text(self, selector: str) -> str:
        """The text of every element the CSS selector finds, one after another."""
        return self.run(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent).join(' ')",
            selector,
        )

    def shows(self, selector: str, words: str) -> None:
        """Wait until an element the CSS selector finds contains ``words``."""
        self.wait_until(
            "[...document.querySelectorAll(arguments[0])]"
            ".some(e => e.checkVisibility() && e.textContent.includes(arguments[1]))",
            f"{selector} showing {words!r}",
            selector,
            words,
        )

    def stream_open(self, log: Path | None = None) -> None:
        """Wait until the page's event stream is open (its pushes can arrive). A failure
        says how the stream is (failed: it erred before it ever opened; none: it neither
        opened nor erred) and ends with the server's ``log``."""
        try:
            self.wait_until(
                "document.querySelector('#stream')?.dataset.stream === 'open'", "the stream open"
            )
        except AssertionError as error:
            try:
                how = self.run(STREAM_STATE)
            except (WebDriverException, BidiError) as gone:
                how = f"unknown ({gone})"
            told = log.read_text()[-4000:] if log and log.exists() else ""
            raise AssertionError(f"{error}\nthe stream: {how or 'none'}\n{told}") from error


# How a page's stream is, for a failure's message: its state, whether htmx and the sse
# extension came (and from where), and what the page fetched.
STREAM_STATE = """
const stream = document.querySelector('#stream');
const fetched = performance.getEntriesByType('resource').map((entry) =>
  `${entry.name.replace(location.origin, '')} at ${Math.round(entry.startTime)} ms`
  + ` for ${Math.round(entry.duration)} ms`);
return JSON.stringify({
  state: stream?.dataset.stream || 'none', connect: stream?.getAttribute('sse-connect'),
  htmx: window.htmx ? window.htmx.version : null, readyState: document.readyState,
  extensions: stream?.getAttribute('data-extensions'), since_load_ms: Math.round(performance.now()),
  processed: Boolean(stream?.['htmx-internal-data']?.initHash),
  source: stream?.['htmx-internal-data']?.sseEventSource?.readyState ?? null,
  fetched,
}, null, 1);
"""


# WebKit: Selenium and Debian's WebKitWebDriver.


class Xvfb:
    """An X server of our own, on the first free display (``-displayfd``)."""

    def __init__(self):
        read, write = os.pipe()
        self.process = subprocess.Popen(
            [XVFB, "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
            pass_fds=(write,),
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with open(read) as number:  # written once the server accepts clients
            self.display = f":{number.readline().strip()}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class WebKitPhone(Phone):
    """A MiniBrowser of WebKitGTK, one WebDriver session (its own cookies)."""

    engine = "webkit"

    def __init__(self, display: str):
        options = webdriver.WebKitGTKOptions()
        options.binary_location = str(MINIBROWSER)
        options.add_argument("--automation")
        # Without its toolbar (shown in a window, it keeps the window 447 px wide at
        # least): the page gets the whole window, 390 px as a phone's.
        options.add_argument("--full-screen")
        self.service = webdriver.WebKitGTKService(WEBKIT_DRIVER, env={"DISPLAY": display})
        self.service.start()
        # Not webdriver.WebKitGTK(): it hands Selenium the driver's address in a way
        # Selenium itself calls deprecated (a DeprecationWarning, an error here).
        address = ClientConfig(remote_server_addr=self.service.service_url)
        self.driver = webdriver.Remote(RemoteConnection(client_config=address), options=options)
        self.resize(PHONE)

    def open(self, url: str) -> None:
        self.driver.get(url)

    def run(self, body: str, *args) -> Any:
        return self.driver.execute_script(body, *args)

    def find(self, selector: str):
        self.wait_for(selector)
        kind, value = locate(selector)
        return self.driver.find_element(By.XPATH if kind == "xpath" else By.CSS_SELECTOR, value)

    def tap(self, selector: str) -> None:
        self.find(selector).click()

    def type(self, selector: str, text: str, enter: bool = True) -> None:
        self.find(selector).send_keys(text, *([Keys.ENTER] if enter else []))

    def resize(self, size: tuple[int, int]) -> None:
        """The page's viewport this size, once the window has taken it (it does so a
        moment after the command answers)."""
        self.driver.set_window_size(*size)
        self.wait_until(
            "innerWidth === arguments[0] && innerHeight === arguments[1]", f"a {size} page", *size
        )

    def forget(self) -> None:
        """Drop the cookies of the last test's server (every port of its address)."""
        self.driver.delete_all_cookies()
        self.driver.get("about:blank")

    def quit(self) -> None:
        self.driver.quit()
        self.service.stop()


# Firefox: WebDriver BiDi over a websocket.


class BidiError(Exception):
    """Firefox refused a command (its error and message)."""


class Bidi:
    """A WebDriver BiDi session with a Firefox of our own: a headless browser on a fresh
    profile, its remote agent on a free port (the port it reads from its log)."""

    def __init__(self):
        self.profile = Path(tempfile.mkdtemp(prefix="firefox-"))
        self.log = self.profile / "firefox.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [
                    FIREFOX,
                    "--headless",
                    "--no-remote",
                    "--profile",
                    str(self.profile),
                    "--remote-debugging-port=0",
                    "about:blank",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        url = self._listening()
        # Firefox refuses a websocket that says where it comes from (an Origin header).
        self.socket = create_connection(f"{url}/session", suppress_origin=True, timeout=60)
        self.ids = itertools.count(1)
        self.command("session.new", capabilities={})

    def _listening(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            found = re.search(r"WebDriver BiDi listening on (ws://\S+)", self.log.read_text())
            if found:
                return found.group(1)
            time.sleep(0.05)
        raise AssertionError(f"Firefox did not start its remote agent: {self.log.read_text()}")

    def command(self, method: str, **params) -> dict:
        """Send a command; its result (events that come first are let go)."""
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == number:
                break
        if answer.get("type") == "error":
            raise BidiError(f"{method}: {answer['error']}: {answer.get('message')}")
        return answer["result"]

    def close(self) -> None:
        """Close the browser: at once, as nothing of its profile is kept (a SIGTERM's
        orderly shutdown takes seconds); its content processes go with it."""
        self.socket.close()
        self.process.kill()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


def to_bidi(value) -> dict:
    """A Python argument as BiDi sends it to a page (strings, numbers, nodes)."""
    if isinstance(value, BidiNode):
        return {"sharedId": value.shared_id}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, int | float):
        return {"type": "number", "value": value}
    return {"type": "string", "value": str(value)}


def from_bidi(result: dict) -> Any:
    """A value the page returned, as Python (a node as a ``BidiNode``)."""
    kind, value = result["type"], result.get("value")
    if kind in ("undefined", "null"):
        return None
    if kind in ("array", "set"):
        return [from_bidi(item) for item in value]
    if kind == "object":
        return {key: from_bidi(item) for key, item in value}
    if kind == "node":
        return BidiNode(result["sharedId"])
    return value


class BidiNode:
    """An element of the page, as BiDi names it."""

    def __init__(self, shared_id: str):
        self.shared_id = shared_id


class FirefoxPhone(Phone):
    """A tab of Firefox in a user context of its own (its own cookies)."""

    engine = "firefox"

    def __init__(self, bidi: Bidi):
        self.bidi = bidi
        self.user_context = bidi.command("browser.createUserContext")["userContext"]
        self.context = bidi.command(
            "browsingContext.create", type="tab", userContext=self.user_context
        )["context"]
        self.resize(PHONE)

    def open(self, url: str) -> None:
        self.bidi.command(
            "browsingContext.navigate", context=self.context, url=url, wait="complete"
        )

    def run(self, body: str, *args) -> Any:
        result = self.bidi.command(
            "script.callFunction",
            functionDeclaration=f"function () {{ {body} }}",
            arguments=[to_bidi(arg) for arg in args],
            target={"context": self.context},
            awaitPromise=True,
        )
        if result["type"] == "exception":
            raise BidiError(result["exceptionDetails"]["text"])
        return from_bidi(result["result"])

    def find(self, selector: str) -> BidiNode:
        """The element, once shown, scrolled to the middle of the screen."""
        self.wait_for(selector)
        kind, value = locate(selector)
        nodes = self.bidi.command(
            "browsingContext.locateNodes",
            context=self.context,
            locator={"type": kind, "value": value},
            maxNodeCount=1,
        )["nodes"]
        node = BidiNode(nodes[0]["sharedId"])
        self.run("arguments[0].scrollIntoView({block: 'center'})", node)
        return node

    def tap(self, selector: str) -> None:
        node = self.find(selector)
        self.actions(
            {
                "type": "pointer",
                "id": "finger",
                "parameters": {"pointerType": "touch"},
                "actions": [
                    {
                        "type": "pointerMove",
                        "x": 0,
                        "y": 0,
                        "origin": {"type": "element", "element": {"sharedId": node.shared_id}},
                    },
                    {"type": "pointerDown", "button": 0},
                    {"type": "pointerUp", "button": 0},
                ],
            }
        )

    def type(self, selector: str, text: str, enter: bool = True) -> None:
        self.tap(selector)
        keys = []
        for key in [*text, *([Keys.ENTER] if enter else [])]:
            keys += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self.actions({"type": "key", "id": "keyboard", "actions": keys})

    def actions(self, source: dict) -> None:
        self.bidi.command("input.performActions", context=self.context, actions=[source])
        self.bidi.command("input.releaseActions", context=self.context)

    def resize(self, size: tuple[int, int]) -> None:
        width, height = size
        self.bidi.command(
            "browsingContext.setViewport",
            context=self.context,
            viewport={"width": width, "height": height},
            devicePixelRatio=2,
        )

    def close(self) -> None:
        self.bidi.command("browser.removeUserContext", userContext=self.user_context)
