"""The tool's own logic, natively: python3 -m unittest"""

import unittest

import app
import ochre_sdk


class HeadingsTest(unittest.TestCase):
    def test_the_script_selects_the_levels_asked_for(self):
        self.assertIn("'h1,h2'", app.script(2))
        self.assertIn("'h1,h2,h3,h4,h5,h6'", app.script(6))

    def test_the_outline_indents_by_level_and_skips_what_it_cannot_read(self):
        found = [[1, "Title"], [2, "Part"], ["x", "bad"], [3, "Detail"]]
        self.assertEqual(app.outline(found), ["h1 Title", "  h2 Part", "    h3 Detail"])
        self.assertEqual(app.outline(None), [])

    def test_the_tool_reads_the_page_through_the_browser_interface(self):
        asked = []
        real = ochre_sdk.browser.evaluate
        ochre_sdk.browser.evaluate = lambda expr, **_: asked.append(expr) or [[1, "Top"], [2, "Part"]]
        ochre_sdk.log.info = lambda message: None
        try:
            out = app.headings({"max_level": 2})
        finally:
            ochre_sdk.browser.evaluate = real
        self.assertEqual(out.texts, ["h1 Top\n  h2 Part"])
        self.assertIn("h1,h2", asked[0])
        with self.assertRaises(ochre_sdk.ToolError):
            app.headings({"max_level": 9})


if __name__ == "__main__":
    unittest.main()
