// When the pinned htmx could not come from its CDN (a home network without internet, a
// blocked CDN), load the same file from the companion itself, checked against the same
// SRI hash. Runs after the CDN's <script defer>, so window.htmx tells whether it loaded.
(function () {
  "use strict";
  var cdn = document.querySelector("script[data-htmx-fallback]");
  if (window.htmx || !cdn) return;
  var contentLoaded = false;
  document.addEventListener("DOMContentLoaded", function () { contentLoaded = true; });
  var copy = document.createElement("script");
  copy.src = cdn.getAttribute("data-htmx-fallback");
  copy.integrity = cdn.integrity;
  copy.crossOrigin = "anonymous";
  copy.onload = function () {
    // htmx starts itself on DOMContentLoaded; a copy that arrives later missed it.
    if (contentLoaded) document.dispatchEvent(new Event("DOMContentLoaded"));
  };
  document.head.appendChild(copy);
})();
