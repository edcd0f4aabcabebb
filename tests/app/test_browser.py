"""The real app in headless Chromium at a desktop and a phone size (skipped when no browser is installed)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from pages import (
    SIZES,
    caption_contrast,
    check_word_in_context_layout,
    cut_off,
    in_a_box_of_its_own,
    layers_and_weaknesses,
    leaving_the_machine,
    legends_outside_their_charts,
    open_browser,
    requested_urls,
    shown,
    wait_for_text,
)


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_in_a_real_browser(served_app: str, index_copy: Path, tmp_path: Path, size: str) -> None:
    """Search (button, tabs, URL, title, reload), Word in context (layout by width, URL, reload), Senses (URL,
    caption), and opening another index (the old query and results go) in headless Chromium at a desktop and a
    phone size: no request leaves the machine, the page icon is the app's own, captions read at AA contrast.
    Screenshots are left in tmp_path."""
    width, height = SIZES[size]
    browser = open_browser(tmp_path, width, height)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    urls: list[str] = []
    try:
        page_text = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        wait = WebDriverWait(browser, 90)
        browser.get(served_app)
        search = '//button[contains(., "Search")]'
        wait.until(
            lambda b: (
                b.find_elements(By.CSS_SELECTOR, 'input[aria-label="Query"]') and b.find_elements(By.XPATH, search)
            )
        )
        query = browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]')
        assert browser.title == "Search · ELMo Search"
        icon = browser.execute_script("return document.querySelector(\"link[rel='shortcut icon']\").href")
        assert icon.startswith(served_app), icon  # served by the app, not fetched from the internet
        query.send_keys("otters by the river")
        browser.find_element(By.XPATH, search).click()
        wait.until(lambda b: "1. Life by the river" in page_text() and "GloVe (static baseline)" in page_text())
        assert "q=otters+by+the+river" in browser.current_url or "q=otters%20by%20the%20river" in browser.current_url
        first = browser.find_element(By.XPATH, '//*[contains(text(), "1. Life by the river")]')
        assert first.location["y"] < height  # the first result is on the first screen
        assert first.rect["x"] + first.rect["width"] <= width  # nothing wider than the screen
        # 4 documents: a note says why relevance is not shown; no bars, no line
        wait.until(lambda b: "relevance is not shown" in page_text())
        assert not re.search(r"relevance \d+%", page_text()) and "Weaker matches below" not in page_text()
        why = browser.find_element(By.XPATH, '//summary[contains(., "matched words: otters, river")]')
        assert why.rect["x"] + why.rect["width"] <= browser.execute_script("return document.body.clientWidth")
        why.click()  # the "why" opens onto each part's score
        wait.until(lambda b: "BM25 keywords" in page_text() and "ELMo cosine (token layer)" in page_text())
        assert caption_contrast(browser) >= 4.5
        time.sleep(1)  # let the last elements paint
        browser.save_screenshot(str(tmp_path / f"search-{size}.png"))

        browser.get(browser.current_url)  # a reload (or a shared link) keeps the search
        wait.until(
            lambda b: (
                "1. Life by the river" in page_text() and b.find_elements(By.CSS_SELECTOR, 'input[aria-label="Query"]')
            )
        )
        query = browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]')
        query.send_keys(Keys.CONTROL, "a")
        query.send_keys(Keys.DELETE, Keys.ENTER)  # a cleared query leaves the URL
        wait.until(lambda b: "q=" not in b.current_url and "Type a query" in page_text())
        urls += requested_urls(browser)

        browser.get(f"{served_app}/word_in_context")
        wait_for_text(browser, "Layer by layer", last_hit=8)
        assert browser.title == "Word in context · ELMo Search" and "wa=bank" in browser.current_url
        check_word_in_context_layout(browser, size, "ELMo · “bank” in A", "ELMo · “bank” in B")
        time.sleep(1)
        browser.save_screenshot(str(tmp_path / f"word-in-context-{size}.png"))
        browser.get(browser.current_url.replace("rep=readout", "rep=0"))  # a shared link with another layer
        wait_for_text(browser, "Layer by layer", last_hit=8)
        sentence = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, 'input[aria-label="Sentence A"]'))
        assert sentence.get_attribute("value") == "The otters dug a den in the muddy bank of the river."
        time.sleep(1)
        assert "rep=0" in browser.current_url  # kept: the page writes back what it shows
        assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        urls += requested_urls(browser)

        browser.get(f"{served_app}/senses?word=play&k=2")
        wait.until(lambda b: "Sense 2" in page_text() and "tap it to read its sentence" in page_text())
        assert "Hover" not in page_text()
        assert browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Word"]').get_attribute("value") == "play"
        assert "Traceback" not in page_text()
        urls += requested_urls(browser)

        if size == "desktop":  # another index: the question asked of the last one goes, in the box and the URL
            browser.get(f"{served_app}/?q=otters+by+the+river")
            wait.until(lambda b: "1. Life by the river" in page_text())
            folder = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, 'input[aria-label="Index folder"]'))
            folder.send_keys(Keys.CONTROL, "a")
            folder.send_keys(str(index_copy), Keys.ENTER)
            wait.until(lambda b: "Type a query" in page_text() and "q=" not in b.current_url)
            assert browser.find_element(By.CSS_SELECTOR, 'input[aria-label="Query"]').get_attribute("value") == ""
            assert "Life by the river" not in page_text()
            urls += requested_urls(browser)
    finally:
        browser.quit()
    assert urls and not leaving_the_machine(urls), leaving_the_machine(urls)
    assert (tmp_path / f"search-{size}.png").stat().st_size > 10_000


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_senses_you_can_see_in_a_real_browser(served_app: str, model_dir: Path, tmp_path: Path, size: str) -> None:
    """What the pages lay out, seen in headless Chromium at a desktop and a phone size. Word in context: the answer (the lists)
    before the question, what the model expects under each list, the two uses compared (a section; a tab on a
    phone), the representation from a link, layer tables with their yardstick that fit the screen. Senses: the
    legend within its chart. Search: the formula within the screen. About: the model card part of the page, not in a
    box of its own; what each layer holds on the first screen, its table and chart within it; the card's section
    on what the model gets wrong where Word in context links to it."""
    width, height = SIZES[size]
    browser = open_browser(tmp_path, width, height)
    from selenium.webdriver.common.by import By

    try:
        page_text = lambda: browser.find_element(By.TAG_NAME, "body").text  # noqa: E731
        browser.get(f"{served_app}/word_in_context")
        wait_for_text(browser, "Layer by layer", last_hit=8)
        wait_for_text(browser, "What the model expects here")
        answer = shown(browser, ".st-key-wide-wic h3" if size == "desktop" else '[data-testid="stTab"]')[0]
        question = next(h for h in shown(browser, "h3") if h.text == "The question")
        assert answer.location["y"] < question.location["y"] < shown(browser, "input")[-1].location["y"]
        assert answer.location["y"] < height  # the answer is on the first screen
        assert "given the words before" in page_text() and "given the words after" in page_text()
        assert "rep=readout" in browser.current_url and "context prediction" in page_text()
        if size == "desktop":
            assert "The two uses compared" in page_text() and "ELMo layer mix (paper)" in page_text()
        else:
            tab = next(t for t in shown(browser, '[data-testid="stTab"]') if t.text == "A vs B")
            tab.click()
            wait_for_text(browser, "the plain average of the layers")
        layer_tables = [table for table in shown(browser, '[data-testid="stTable"]') if "same sense" in table.text]
        assert len(layer_tables) == 2 and not cut_off(browser, '[data-testid="stTable"]')
        assert all("chance" in table.text and "best possible" in table.text for table in layer_tables)
        assert "tied: no verdict" in layer_tables[0].text  # the token layer
        browser.save_screenshot(str(tmp_path / f"word-in-context-{size}.png"))

        browser.get(f"{served_app}/word_in_context?rep=1")  # a link with another representation
        wait_for_text(browser, "Nearest uses by ELMo h1 · biLSTM 1")

        browser.get(f"{served_app}/senses?word=play&k=2")
        wait_for_text(browser, "Clustered by context prediction.")
        time.sleep(2)  # the chart draws after the text
        assert shown(browser, '[data-testid="stVegaLiteChart"] svg .role-legend')
        assert not legends_outside_their_charts(browser) and not cut_off(browser, '[data-testid="stVegaLiteChart"]')
        browser.save_screenshot(str(tmp_path / f"senses-{size}.png"))

        browser.get(f"{served_app}/?q=otters")
        wait_for_text(browser, "Advanced")
        browser.find_element(By.XPATH, '//summary[contains(., "Advanced")]').click()
        time.sleep(2)
        assert shown(browser, ".katex-display") and not cut_off(browser, ".katex-display")

        browser.get(f"{served_app}/about")
        wait_for_text(browser, "Random weights, trained on nothing")
        assert not in_a_box_of_its_own(browser, "Random weights, trained on nothing")
        assert not cut_off(browser, '[data-testid="stTable"]') and not legends_outside_their_charts(browser)
        assert not browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')

        with layers_and_weaknesses(model_dir):  # as the default model ships them
            browser.get(f"{served_app}/about")
            wait_for_text(browser, "Everything, for now.")
            time.sleep(2)  # the chart draws after the text
            first, card = (
                next(h for h in shown(browser, "h2") if h.text == name)
                for name in ("What each layer holds", "Model card")
            )
            assert first.location["y"] < height < card.location["y"]  # the layers' lesson on the first screen
            browser.save_screenshot(str(tmp_path / f"about-{size}.png"))
            assert "sense probe AUC" in page_text() and "learned for WiC" in page_text()
            assert not cut_off(browser, '[data-testid="stTable"]') and not legends_outside_their_charts(browser)
            browser.get(f"{served_app}/about#what-it-still-gets-wrong")  # the link of an example gone wrong
            wait_for_text(browser, "Everything, for now.")
            time.sleep(2)
            section = browser.find_element(By.ID, "what-it-still-gets-wrong")
            assert 0 <= browser.execute_script("return arguments[0].getBoundingClientRect().top", section) < height
    finally:
        browser.quit()
