//! The documents, the script and the image of an app site: the same bytes on
//! every host and for every post; everything a post is made of comes from
//! `/api/` at run time.

/// An app document: `title`, the app's script (which runs the part `page` names, from
/// `body[data-page]`), `style` when given, and `body`.
fn document(title: &str, page: &str, style: &str, body: &str) -> String {
    let style = if style.is_empty() {
        String::new()
    } else {
        format!("<style>{style}</style>\n")
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n{style}<script src=\"/static/app.js\" defer></script>\n\
         </head>\n<body data-page=\"{page}\">\n{body}</body>\n</html>\n"
    )
}

/// `/`: the posts, one page at a time; "More" appends the next page.
pub(crate) fn home_html() -> String {
    document(
        "Posts",
        "home",
        "",
        "<h1>Posts</h1>\n<img src=\"/static/logo.png\" alt=\"logo\" width=\"16\" height=\"16\">\n\
         <ul id=\"posts\"></ul>\n<button id=\"more\" type=\"button\">More</button>\n",
    )
}

/// `/scroll`: the posts with infinite scroll; every item is 400px tall and
/// the next page loads when `#sentinel` comes into view.
pub(crate) fn scroll_html() -> String {
    document(
        "Posts, scrolling",
        "scroll",
        "#posts li { min-height: 400px; }",
        "<h1>Posts</h1>\n<ul id=\"posts\"></ul>\n<div id=\"sentinel\">Loading...</div>\n",
    )
}

/// `/post/ID`: one post, rendered from `/api/post/ID`.
pub(crate) fn post_html() -> String {
    document(
        "Post",
        "post",
        "",
        "<article id=\"post\"><p>Loading...</p></article>\n",
    )
}

/// `/never-settles`: asks `/api/tick` every 100 ms, forever.
pub(crate) fn never_settles_html() -> String {
    document(
        "Never settles",
        "never-settles",
        "",
        "<p>Ticks: <span id=\"ticks\">0</span></p>\n",
    )
}

/// `/static/app.js`: one script for every page, chosen by `body[data-page]`.
pub(crate) const APP_JS: &str = r#""use strict";
// squall's test application. Every post link, title and text comes from
// /api/ at run time; none is in a document.
(function () {
  function getJson(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (resp) {
      return resp.json().then(function (body) {
        return { status: resp.status, body: body };
      });
    });
  }

  function el(tag, text, attrs) {
    var node = document.createElement(tag);
    if (text !== null) { node.textContent = text; }
    Object.keys(attrs || {}).forEach(function (name) {
      node.setAttribute(name, attrs[name]);
    });
    return node;
  }

  function showError(err) {
    document.body.appendChild(el("p", "error: " + err, { "class": "error" }));
  }

  function postItem(post) {
    var li = el("li", null);
    li.appendChild(el("a", post.title, { href: "/post/" + post.id }));
    return li;
  }

  // Loads /api/posts one page at a time into `list`, until `wanted` pages
  // are shown; `more()` wants one page more. Calls `onPage` after each page
  // and `onEnd` after the last one.
  function pager(list, onPage, onEnd) {
    var loaded = 0, wanted = 1, busy = false, ended = false;
    function pump() {
      if (busy || ended || loaded >= wanted) { return; }
      busy = true;
      getJson("/api/posts?page=" + loaded).then(function (r) {
        if (r.status !== 200) { throw new Error("HTTP " + r.status); }
        r.body.posts.forEach(function (post) { list.appendChild(postItem(post)); });
        loaded += 1;
        busy = false;
        if (!r.body.more) { ended = true; onEnd(); }
        onPage();
        pump();
      }).catch(function (err) {
        busy = false;
        ended = true;
        showError(err);
      });
    }
    pump();
    return {
      more: function () { wanted += 1; pump(); },
      idle: function () { return !busy && !ended; }
    };
  }

  // "More" shows one page more per click; it is removed after the last page.
  function home() {
    var button = document.getElementById("more");
    var posts = pager(document.getElementById("posts"), function () {}, function () {
      button.remove();
    });
    button.addEventListener("click", function () { posts.more(); });
  }

  // The next page loads when the sentinel below the list comes into view.
  function scroll() {
    var sentinel = document.getElementById("sentinel");
    var observer = null;
    var posts = null;
    function check() {
      if (posts !== null && posts.idle() && sentinel.isConnected &&
          sentinel.getBoundingClientRect().top <= window.innerHeight) {
        posts.more();
      }
    }
    posts = pager(document.getElementById("posts"), check, function () {
      if (observer !== null) { observer.disconnect(); }
      window.removeEventListener("scroll", check);
      sentinel.replaceWith(el("p", "No more posts.", { id: "end" }));
    });
    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver(check);
      observer.observe(sentinel);
    }
    window.addEventListener("scroll", check, { passive: true });
  }

  function post() {
    var root = document.getElementById("post");
    var m = /^\/post\/(0|[1-9][0-9]*)$/.exec(window.location.pathname);
    function render(nodes) {
      root.textContent = "";
      nodes.forEach(function (node) { root.appendChild(node); });
      root.appendChild(el("a", "home", { href: "/" }));
    }
    if (m === null) {
      render([el("h1", "Not found"), el("p", "not found", { "class": "not-found" })]);
      return;
    }
    getJson("/api/post/" + m[1]).then(function (r) {
      if (r.status === 200) {
        document.title = r.body.title;
        render([el("h1", r.body.title), el("p", r.body.text, { "class": "post-text" })]);
      } else {
        render([el("h1", "Not found"), el("p", "not found", { "class": "not-found" })]);
      }
    }).catch(showError);
  }

  function neverSettles() {
    var out = document.getElementById("ticks");
    var ticks = 0;
    window.setInterval(function () {
      getJson("/api/tick").then(function () {
        ticks += 1;
        out.textContent = String(ticks);
      }, function () {});
    }, 100);
  }

  var pages = { home: home, scroll: scroll, post: post, "never-settles": neverSettles };
  function start() {
    var run = pages[document.body.dataset.page];
    if (run) { run(); }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
"#;

/// `/static/logo.png`: a valid 1x1 transparent PNG.
pub(crate) const LOGO_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, // signature
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, // IHDR, 13 bytes
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // 1x1
    0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, // RGBA 8 bits, CRC
    0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, // IDAT, 10 bytes
    0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, // zlib data
    0x0d, 0x0a, 0x2d, 0xb4, // CRC
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82, // IEND, CRC
];
