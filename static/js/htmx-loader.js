// Load the pinned scripts (htmx, then its extensions) from their CDN, checked by their
// SRI hashes; when one cannot come from there (a home network without internet, a
// blocked CDN, or a DNS that hangs instead of failing), load the same file from the
// companion itself, with the same hash, after at most WAIT ms. Scripts added here never
// hold back DOMContentLoaded, which a hanging <script defer> would, for good.
(function () {
  "use strict";
  var WAIT = 3000;
  var loader = document.currentScript;
  var scripts = JSON.parse(loader.getAttribute("data-scripts"));
  var contentLoaded = document.readyState !== "loading";
  var htmxStarted = false;
  var cdnReachable = true;
  document.addEventListener("DOMContentLoaded", function () { contentLoaded = true; });
  // htmx has started once it processed an element: told at once (htmx:load comes a task
  // later, and an extension that came in between was not done again: a stream never
  // opened). A page loaded before htmx came is processed as htmx runs.
  document.addEventListener("htmx:afterProcessNode", function () { htmxStarted = true; });
  document.addEventListener("htmx:load", function () { htmxStarted = true; });

  function insert(src, integrity, done) {
    var script = document.createElement("script");
    script.src = src;
    script.integrity = integrity;
    script.crossOrigin = "anonymous";
    script.onload = function () { done(true); };
    script.onerror = function () { done(false); };
    document.head.appendChild(script);
  }

  // One script: the CDN's while it answers in time, else the companion's copy.
  function load(script, next) {
    var settled = false;
    function settle() {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    }
    function copy() {
      if (!settle()) return;
      cdnReachable = false; // the next ones come from the companion straight away
      insert(script.copy, script.integrity, next);
    }
    function giveUp() {
      // The CDN's request would hold the page's load event (and the browser's spinner)
      // until the DNS gives up, minutes later: stop loading it, then take the copy.
      if (!settled) window.stop();
      copy();
    }
    var timer = setTimeout(giveUp, WAIT);
    if (!cdnReachable) return copy();
    insert(script.src, script.integrity, function (ok) {
      if (!ok) return copy();
      if (settle()) next();
    });
  }

  function loadFrom(index) {
    if (index === scripts.length) return started();
    if (index > 0 && !window.htmx) return started(); // no htmx: no extension either
    load(scripts[index], function () { loadFrom(index + 1); });
  }

  // htmx starts itself on DOMContentLoaded: one that came after it missed it. One that
  // started before its extensions came processes their elements again now.
  function started() {
    if (!window.htmx) return;
    if (!htmxStarted && contentLoaded) {
      document.dispatchEvent(new Event("DOMContentLoaded"));
    } else if (htmxStarted) {
      document.querySelectorAll("[hx-ext]").forEach(function (element) {
        element.setAttribute("data-extensions", "loaded"); // a new attribute: htmx redoes it
        window.htmx.process(element);
      });
    }
  }

  loadFrom(0);
})();
