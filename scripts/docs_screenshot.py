"""Take the README's picture: a ``%%agent`` run in a real JupyterLab, its live view waiting for Approve / Deny.

Starts JupyterLab on a free loopback port (the end-to-end harness of ``tests/notebook/lab_harness.py``), runs the
demo shop's delete-account task with the offline demo model under ``ask-risky``, waits until the run's view
shows the approval panel, screenshots the notebook from its first cell to the end of the run's view, then stops
the run. No API key and no internet: everything listens on 127.0.0.1.

    python scripts/docs_screenshot.py [--out docs/images/notebook-run.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "notebook"))

from lab_harness import LabNotebook, LabServer, launch_chromium  # noqa: E402

CELLS = [
    "%load_ext notebook_agent",
    "from notebook_agent.demo import demo_url\nurl = demo_url()  # the bundled demo shop, on 127.0.0.1",
    "%%agent --model demo --approve ask-risky --url {url}\nOpen my account page and delete my account.",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "notebook-run.png")
    parser.add_argument("--width", type=int, default=1280, help="browser viewport width in CSS pixels")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, LabServer(Path(tmp)) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            server.write_notebook("run.ipynb", CELLS)
            nb = LabNotebook(server, browser, "run.ipynb", viewport=(args.width, 1500)).open()
            for i in (0, 1):
                nb.run_cell(i)
                nb.assert_no_error(i)
            nb.run_cell(2)
            nb.assert_no_error(2)
            run = nb.cell(2).locator(".na-run")
            run.locator(".na-approval .na-approve").wait_for(timeout=60_000)
            nb.page.wait_for_function(
                "(run) => [...run.querySelectorAll('img')].some((i) => i.naturalWidth > 0)",
                arg=run.element_handle(),
                timeout=30_000,
            )
            nb.page.mouse.move(0, 0)  # no hover highlight in the picture
            top = nb.cell(0).bounding_box()
            bottom = nb.cell(2).bounding_box()
            panel = nb.panel.bounding_box()  # the notebook alone, without JupyterLab's side bars
            clip = {
                "x": panel["x"],
                "y": top["y"] - 8,
                "width": panel["width"],
                "height": bottom["y"] + bottom["height"] - top["y"] + 12,
            }
            args.out.parent.mkdir(parents=True, exist_ok=True)
            nb.page.screenshot(path=str(args.out), clip=clip)
            run.locator(".na-deny").click()  # end the run before the kernel goes
            nb.close()
        finally:
            browser.close()
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
