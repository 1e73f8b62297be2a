// The web view's live updates: the server sends a "changed" event each time the workspace
// changes; the page reloads then, unless the reader is typing in a form.
(function () {
  const badge = document.getElementById("live");
  const events = new EventSource("/events");
  events.onopen = () => badge && badge.classList.add("on");
  events.onerror = () => badge && badge.classList.remove("on");
  events.addEventListener("changed", () => {
    const active = document.activeElement;
    if (active && ["INPUT", "SELECT", "TEXTAREA"].includes(active.tagName)) return;
    window.location.reload();
  });
})();
