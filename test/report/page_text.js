// Injected by demo_pages.sh into a copy of a page (the pages themselves have no
// scripts): opens every <details>, then appends to the body, as JSON in a pre element of
// id envgate-text for `chromium --dump-dom` to print, the text a person reads as the
// browser laid it out:
//  * sections: each dashboard card (section.lock), each step row of a summary
//    (table.steps > tbody > tr outside a card) and the rest of a summary page, with
//    their rendered text (innerText) and the text of their <code> elements;
//  * broken: each word of at most 40 characters that the layout split across two lines
//    somewhere else than after a hyphen, slash, dot or other separator
//    ("demo-pipel|ine-3"), with the element it is in; on a screen under 800 px not in a
//    code block (<pre>), whose lines wrap as a terminal's do.
(function () {
  document.querySelectorAll("details").forEach(function (d) {
    d.open = true;
  });
  function describe(el) {
    return el.tagName.toLowerCase() + (el.className ? "." + String(el.className).replace(/ /g, ".") : "");
  }
  function codes(el) {
    return Array.prototype.map.call(el.querySelectorAll("code"), function (c) {
      return c.innerText;
    });
  }
  var out = { width: window.innerWidth, sections: [], broken: [] };
  document.querySelectorAll("section.lock").forEach(function (s) {
    out.sections.push({ name: "card " + s.id, text: s.innerText, codes: codes(s) });
  });
  document.querySelectorAll("table.steps > tbody > tr").forEach(function (tr) {
    if (!tr.closest("section")) {
      var step = tr.cells.length > 1 ? tr.cells[1].innerText : "?";
      out.sections.push({ name: "step row " + step, text: tr.innerText, codes: codes(tr) });
    }
  });
  if (!document.querySelector("section.lock")) {
    var rest = { name: "the page outside the steps table", text: "", codes: [] };
    Array.prototype.forEach.call(document.body.children, function (el) {
      if (!el.matches("table.steps, script, pre#envgate-measure")) {
        rest.text += el.innerText + "\n";
        rest.codes = rest.codes.concat(codes(el));
      }
    });
    out.sections.push(rest);
  }
  var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  var range = document.createRange();
  while (walker.nextNode()) {
    var node = walker.currentNode;
    if (node.parentElement.closest("script, style, pre#envgate-measure")) {
      continue;
    }
    var text = node.textContent, re = /\S+/g, m;
    while ((m = re.exec(text))) {
      var word = m[0];
      if (word.length > 40 || (out.width < 800 && node.parentElement.closest("pre"))) {
        continue;  // a long path or URL, or a code block's line on a narrow screen
      }
      range.setStart(node, m.index);
      range.setEnd(node, m.index + word.length);
      var rects = Array.prototype.filter.call(range.getClientRects(), function (r) {
        return r.width > 0;
      });
      if (rects.length < 2) {
        continue;
      }
      for (var i = 1; i < word.length; ++i) {
        range.setStart(node, m.index + i);
        range.setEnd(node, m.index + i + 1);
        var r = range.getClientRects()[0];
        if (r && r.top > rects[0].top + 2) {
          if (!/[-\/.,:;=_@#)]/.test(word[i - 1])) {
            out.broken.push({ word: word, at: i, element: describe(node.parentElement) });
          }
          break;
        }
      }
    }
  }
  var pre = document.createElement("pre");
  pre.id = "envgate-text";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
