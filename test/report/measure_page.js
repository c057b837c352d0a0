// Injected by screenshots.sh into a copy of a page (the pages themselves have no
// scripts): measures what the browser laid out and appends it to the body as JSON in
// a pre element of id envgate-measure, for `chromium --dump-dom` to print.
//  * contrast: for every element with text of its own, the WCAG 2 contrast ratio of its
//    computed colour against the background it is drawn on (ancestors' backgrounds
//    composited, alpha included); 4.5:1 needed, 3:1 for large text.
//  * overflow: the page wider than the window, or any element whose content is wider
//    than its box (scrolled or clipped), or that reaches past the window's right edge.
(function () {
  function rgba(text) {
    var m = text.match(/rgba?\(([^)]*)\)/);
    if (!m) {
      return null;
    }
    var p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  }
  function over(top, under) {
    var a = top.a + under.a * (1 - top.a);
    function mix(k) {
      return a === 0 ? 0 : (top[k] * top.a + under[k] * under.a * (1 - top.a)) / a;
    }
    return { r: mix("r"), g: mix("g"), b: mix("b"), a: a };
  }
  function luminance(c) {
    function lin(v) {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    }
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  }
  function ratio(a, b) {
    var x = luminance(a), y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }
  // The colour behind `el`: its and its ancestors' backgrounds, over the canvas.
  function background(el) {
    var layers = [];
    for (var e = el; e && e.nodeType === 1; e = e.parentElement) {
      var c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) {
          break;
        }
      }
    }
    var dark = matchMedia("(prefers-color-scheme: dark)").matches;
    var bg = dark ? { r: 18, g: 18, b: 18, a: 1 } : { r: 255, g: 255, b: 255, a: 1 };
    for (var i = layers.length - 1; i >= 0; --i) {
      bg = over(layers[i], bg);
    }
    return bg;
  }
  function ownText(el) {
    var text = "";
    el.childNodes.forEach(function (n) {
      if (n.nodeType === 3) {
        text += n.textContent;
      }
    });
    return text.trim();
  }
  function describe(el) {
    return el.tagName.toLowerCase() + (el.className ? "." + String(el.className).replace(/ /g, ".") : "");
  }
  var out = {
    dark: matchMedia("(prefers-color-scheme: dark)").matches,
    width: window.innerWidth,
    page_width: document.documentElement.scrollWidth,
    client_width: document.documentElement.clientWidth,
    checked: 0,
    min_ratio: 100,
    low: [],
    overflow: []
  };
  document.body.querySelectorAll("*").forEach(function (el) {
    var style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") {
      return;
    }
    var text = ownText(el);
    if (text) {
      var bg = background(el);
      var r = ratio(over(rgba(style.color), bg), bg);
      var size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight, 10) >= 700;
      var need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      out.checked += 1;
      out.min_ratio = Math.min(out.min_ratio, r);
      if (r < need) {
        out.low.push({ element: describe(el), text: text.slice(0, 60), ratio: Math.round(r * 100) / 100,
                       color: style.color, background: "rgb(" + [bg.r, bg.g, bg.b].map(Math.round) + ")" });
      }
    }
    var box = el.getBoundingClientRect();
    if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== "visible" && el.clientWidth > 0) {
      out.overflow.push({ element: describe(el), why: "content " + el.scrollWidth + "px in a box of " + el.clientWidth + "px" });
    }
    if (box.right > window.innerWidth + 1) {
      out.overflow.push({ element: describe(el), why: "reaches x=" + Math.round(box.right) + " past the window" });
    }
  });
  var pre = document.createElement("pre");
  pre.id = "envgate-measure";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
