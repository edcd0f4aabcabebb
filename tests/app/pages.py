"""What the app's tests share: the test collection, opening the app on an index (``streamlit.testing``), reading
its pages, and serving it to a real browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app.settings import CODE_ROOT, INDEX_ENV, MAIN_SCRIPT

DOCUMENTS = [
    (
        "river",
        "Life by the river",
        "The otters live in a den on the muddy bank of the river. Willow roots hold the "
        "river bank together. Kingfishers nest in the steep bank above the water. Ducks rest on the grassy bank.",
    ),
    (
        "money",
        "Saving money",
        "She opened an account at the bank on the high street. The bank raised its interest "
        "rate. A loan from the bank paid for the house. The bank lends money to small firms.",
    ),
    (
        "theatre",
        "Opening night",
        "The actors rehearsed the new play for weeks. The play opened at the theatre on "
        "Friday. Critics loved the play and its songs. The audience cheered at the end of the play.",
    ),
    (
        "game",
        "Weekend sport",
        "The children play football in the park. They play a game of cards after dinner. "
        "Both teams play hard in the final match. We play tennis every Sunday morning.",
    ),
]


MODEL_CARD = "# Tiny test model\n\nRandom weights, trained on nothing; perplexity: not measured.\n"


HOSTILE_TITLE = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) $a$ :smile: **bold**"
"""A document title written as markup (HTML, a ``javascript:`` link, LaTeX, an emoji shortcode, emphasis): the
hostile index's (``conftest.hostile_index_dir``), shown as text on every page."""


def open_url(index: Path, params: dict[str, str], page: str | None = None) -> AppTest:
    """The app on ``index`` opened from a link to ``page`` (e.g. "views/senses.py") with these query parameters."""
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    if page is not None:
        at.switch_page(page)
    at.query_params.update(params)
    return at.run()


def open_app(index: Path, page: str | None = None) -> AppTest:
    """The app on ``index``, run once (and then on ``page``, e.g. "views/senses.py")."""
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.session_state["index_dir"] = str(index)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def texts(elements) -> list[str]:
    return [e.value for e in elements]


def notices(at: AppTest) -> list[str]:
    """The page's notices as a reader sees them: the text escaped for markdown, shown as typed."""
    return [text.replace("\\", "") for text in texts(at.info)]


def search_as_typed(at: AppTest, respelled: str) -> None:
    """Click the respelled search's button that searches the words as typed: in this tab (not a link that opens
    another), the toggle and the link's ``typed`` on, and no notice containing ``respelled`` any more."""
    at.button(key="search.as_typed.elmo").click().run()
    assert at.toggle(key="ui.search.as_typed").value and at.query_params["typed"] == "1"
    assert not any(respelled in text for text in notices(at))


def results(at: AppTest) -> list[str]:
    """The ranked uses of a word (markdown starting with the rank and a score in backticks), in order, as a wide
    screen shows them (a phone gets the same lists in tabs)."""
    try:
        wide = at.get_by_key("wide-wic")
    except KeyError:  # no word chosen: no lists
        return []
    return [m.value for m in wide.markdown if re.match(r"\*\*\d+\.\*\* `", m.value)]


def documents(at: AppTest) -> list[str]:
    """The titles of the documents found, in page order (both tabs)."""
    return [m.value for m in at.markdown if re.match(r"\*\*\d+\. ", m.value)]


def as_read(markdown: str) -> str:
    """Markdown text as a reader sees it: its backslash escapes of ASCII punctuation undone (as CommonMark reads
    them)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def table_text(table) -> pd.DataFrame:
    """A table element's cells and headings as a reader sees them (``st.table`` renders each as markdown)."""
    frame = table.value.map(as_read)
    frame.columns = [as_read(column) for column in frame.columns]
    return frame


def tables(at) -> list[pd.DataFrame]:
    """The tables of a page (or of one of its blocks), as a reader sees them, in page order."""
    return [table_text(table) for table in at.table]


def layer_tables(at: AppTest) -> list:
    """The layer-by-layer tables (one per labelled sentence), in page order."""
    return [table for table in tables(at) if "same sense" in table.columns]


def expectation_tables(at: AppTest) -> list:
    """The "What the model expects here" tables of a wide screen, sentence A's first."""
    return [table for table in tables(at.get_by_key("wide-wic")) if "given the words before" in table.columns]


def labels_in_the_index(index_dir: Path, labels: dict) -> list:
    """The labels of the uses the test index holds (not the example sentences)."""
    from indexer import Index

    held = set(Index.open(index_dir).sentences["text"])
    return [label for (sentence, _), label in labels.items() if sentence in held]


def chart_data(at: AppTest) -> list:
    """The data frames behind the page's first chart (Streamlit sends them apart from the spec, as Arrow)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    return [convert_arrow_bytes_to_pandas_df(d.data.data) for d in at.get("vega_lite_chart")[0].proto.datasets]


def card_labels(at: AppTest) -> list[str]:
    """The sense cards' names, in order."""
    return [m.value.split("**")[1] for m in at.markdown if m.value.startswith("**") and " · " in m.value]


def in_a_scroll_box(node, text: str, boxed: bool = False) -> bool:
    """Whether markdown holding ``text`` sits in a container of fixed height (a box with its own scroll bar)."""
    proto = getattr(node, "proto", None)
    boxed = boxed or bool(proto is not None and "pixel_height" in str(getattr(proto, "height_config", "")))
    if type(node).__name__ == "Markdown" and text in node.value:
        return boxed
    return any(in_a_scroll_box(child, text, boxed) for child in getattr(node, "children", {}).values())


def facts_of(at: AppTest, n: int) -> dict[str, str]:
    """The ``n``-th fact sheet of the About page (0: the model's, 1: the index's) as {fact: value}."""
    table = tables(at)[n]
    return dict(zip(table[table.columns[0]], table[table.columns[1]]))


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(index: Path, tmp_path: Path) -> Iterator[str]:
    """The app on ``index`` served by ``streamlit run`` (as ``python -m app`` starts it) on a free local port."""
    from app.__main__ import streamlit_command

    port = free_port()
    env = {
        **os.environ,
        INDEX_ENV: str(index),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE_ROOT), os.environ.get("PYTHONPATH")])),
    }
    log = open(tmp_path / "streamlit.log", "w")
    server = subprocess.Popen(
        streamlit_command("127.0.0.1", port), cwd=CODE_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start: {(tmp_path / 'streamlit.log').read_text()}")
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}


def open_browser(tmp_path: Path, width: int, height: int):
    """Headless Chromium at ``width`` x ``height``, recording its network requests (skips the test when no browser
    is installed)."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("no headless browser: install the Debian packages chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--window-size={width},{height}", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # DevTools' network events
    browser = webdriver.Chrome(options=options, service=Service(driver_path))
    # the viewport itself: a window is never narrower than 500 px, a phone's screen is
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    return browser


def requested_urls(browser) -> list[str]:
    """Every URL the page asked for since the last call (DevTools' performance log)."""
    events = (json.loads(entry["message"])["message"] for entry in browser.get_log("performance"))
    return [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]


def leaving_the_machine(urls: list[str]) -> list[str]:
    """The URLs that go over the network to another machine (data:, blob: and chrome:// never leave the browser)."""
    from urllib.parse import urlsplit

    network = [urlsplit(u) for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss", "ftp")]
    return [u.geturl() for u in network if u.hostname not in ("127.0.0.1", "localhost", "::1")]


def caption_contrast(browser) -> float:
    """The contrast on the page's background of its first caption, as painted (colour and opacity)."""
    color, opacity, background = browser.execute_script(
        "const caption = document.querySelector('[data-testid=\"stCaptionContainer\"]');"
        "const style = getComputedStyle(caption);"
        "return [style.color, style.opacity, getComputedStyle(document.querySelector('.stApp')).backgroundColor];"
    )
    rgb = lambda text: "#" + "".join(f"{int(v):02x}" for v in re.findall(r"[\d.]+", text)[:3])  # noqa: E731
    return contrast(blend(rgb(color), float(opacity), rgb(background)), rgb(background))


def wait_for_text(browser, text: str, last_hit: int | None = None, timeout: int = 90) -> None:
    """Wait until the page shows ``text`` (and, with ``last_hit``, a ranked list that far: "8. 0.939 · …", or
    "8. -0.120 · …" where uses are compared around their word's mean use)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def ready(browser) -> bool:
        body = browser.find_element(By.TAG_NAME, "body").text
        return text in body and (last_hit is None or re.search(rf"(^|\n){last_hit}\. -?\d\.\d{{3}} ", body) is not None)

    WebDriverWait(browser, timeout).until(ready)


def shown(browser, css: str) -> list:
    """The elements matching ``css`` that the page displays (not hidden by the layout for this width)."""
    from selenium.webdriver.common.by import By

    return [element for element in browser.find_elements(By.CSS_SELECTOR, css) if element.is_displayed()]


def check_word_in_context_layout(browser, size: str, first: str, second: str) -> None:
    """A wide screen shows sentence A's and B's lists side by side; a phone shows them as tabs, one at a time."""
    from selenium.webdriver.support.ui import WebDriverWait

    def settled(b) -> bool:  # while Streamlit re-renders, the old layout can linger beside the new one
        return bool(shown(b, ".st-key-wide-wic")) != bool(shown(b, ".st-key-narrow-wic"))

    WebDriverWait(browser, 30).until(settled)
    wide, narrow = shown(browser, ".st-key-wide-wic"), shown(browser, ".st-key-narrow-wic")
    if size == "desktop":
        assert wide and not narrow
        headings = [h for h in shown(browser, ".st-key-wide-wic h3") if h.text in (first, second)]
        assert len(headings) == 2 and abs(headings[0].location["y"] - headings[1].location["y"]) < 5
        assert headings[0].location["x"] < headings[1].location["x"]
    else:
        assert narrow and not wide
        tabs = shown(browser, '.st-key-narrow-wic [data-testid="stTab"]')
        assert len(tabs) == 4 and shown(browser, '.st-key-narrow-wic [data-testid="stTabPanel"]')
        tabs[1].click()  # sentence B's list in place of A's
        time.sleep(0.5)
        assert tabs[1].get_attribute("aria-selected") == "true"


def cut_off(browser, css: str) -> list[str]:
    """The shown elements matching ``css`` that the screen cuts off: reaching past its edges, or holding more than
    they show across (a scroll bar of their own; a formula's few pixels of struts aside)."""
    return browser.execute_script(
        "const width = document.documentElement.clientWidth, cut = [];"
        "for (const e of document.querySelectorAll(arguments[0])) {"
        "  const r = e.getBoundingClientRect();"
        "  if (r.width === 0) continue;"
        "  if (r.left < -0.5 || r.right > width + 0.5 || e.scrollWidth > e.clientWidth + 4)"
        "    cut.push(e.outerHTML.slice(0, 100));"
        "}"
        "return cut;",
        css,
    )


def legends_outside_their_charts(browser) -> list[str]:
    """Chart legends drawn (partly) outside their chart, where the chart cuts them off."""
    return browser.execute_script(
        "const cut = [];"
        "for (const chart of document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] svg')) {"
        "  const c = chart.getBoundingClientRect();"
        "  for (const legend of chart.querySelectorAll('.role-legend')) {"
        "    const r = legend.getBoundingClientRect();"
        "    if (r.left < c.left - 0.5 || r.right > c.right + 0.5) cut.push(legend.textContent.slice(0, 100));"
        "  }"
        "}"
        "return cut;"
    )


def in_a_box_of_its_own(browser, text: str) -> bool:
    """Whether the element showing ``text`` sits in a box that scrolls on its own (the page aside)."""
    return browser.execute_script(
        "const walker = document.evaluate(`//*[contains(text(), ${JSON.stringify(arguments[0])})]`, document, null,"
        "  XPathResult.FIRST_ORDERED_NODE_TYPE, null);"
        "let node = walker.singleNodeValue;"
        "while (node && node.dataset?.testid !== 'stMainBlockContainer') {"
        "  const style = getComputedStyle(node);"
        "  if (['auto', 'scroll'].includes(style.overflowY) && node.scrollHeight > node.clientHeight + 1) return true;"
        "  node = node.parentElement;"
        "}"
        "return false;",
        text,
    )


@contextmanager
def layers_and_weaknesses(model_dir: Path) -> Iterator[None]:
    """The test model with the default model's layers.json and a "What it still gets wrong" section in its card,
    for the time of the block."""
    from app.model_card import LAYERS_FILE
    from encoder.model_files import resolve_model

    card = model_dir / "README.md"
    before = card.read_text(encoding="utf-8")
    shutil.copy(resolve_model("default").folder / LAYERS_FILE, model_dir / LAYERS_FILE)
    card.write_text(before + "\n## What it still gets wrong\n\nEverything, for now.\n", encoding="utf-8")
    try:
        yield
    finally:
        card.write_text(before, encoding="utf-8")
        (model_dir / LAYERS_FILE).unlink()


# ------------------------------------------------------------------------------------------ contrast
def luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of an sRGB colour "#rrggbb"."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str = "#ffffff") -> float:
    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def blend(colour: str, opacity: float, background: str = "#ffffff") -> str:
    """``colour`` at ``opacity`` over ``background``, as the browser paints it."""
    mixed = [
        round(opacity * int(colour[i : i + 2], 16) + (1 - opacity) * int(background[i : i + 2], 16)) for i in (1, 3, 5)
    ]
    return "#" + "".join(f"{c:02x}" for c in mixed)
