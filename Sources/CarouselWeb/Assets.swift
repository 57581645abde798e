/// The page's style and script: served from the binary (no files to
/// install, no build chain), the only script and style the
/// Content-Security-Policy lets run.
enum Assets {
    /// Three overlapping frames, the carousel's pages.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="1" y="8" width="8" height="16" rx="2" \
        fill="#8ab4f8"/><rect x="23" y="8" width="8" height="16" rx="2" fill="#8ab4f8"/><rect x="7" y="5" width="18" \
        height="22" rx="3" fill="#0b57d0"/></svg>
        """

    static let css = """
        :root { color-scheme: light dark; --bg: #fafafa; --fg: #1b1b1b; --muted: #5f5f5f; --accent: #0b57d0;
          --card: #fff; --line: #d9d9d9; --bad: #b3261e; --good: #146c2e; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #121212; --fg: #ececec; --muted: #a8a8a8; --accent: #8ab4f8; --card: #1e1e1e; --line: #3a3a3a;
            --bad: #f2b8b5; --good: #a8dab5; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
        header { background: var(--card); border-bottom: 1px solid var(--line); padding: 8px 12px; }
        header h1 { font-size: 1.1rem; margin: 0 0 6px; }
        nav { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
        nav a { display: inline-flex; align-items: center; min-height: 48px; padding: 0 16px; border-radius: 24px;
          color: var(--fg); text-decoration: none; }
        nav a[aria-current="page"] { background: var(--accent); color: var(--bg); }
        nav .signout { margin-left: auto; }
        main { padding: 12px; max-width: 720px; margin: 0 auto; }
        button, input[type="file"], input[type="password"] { font: inherit; min-height: 48px; }
        button { padding: 0 18px; border: 1px solid var(--line); border-radius: 24px; background: var(--card); color: var(--fg); }
        button[type="submit"] { cursor: pointer; }
        .now { margin: 0; background: #000; border-radius: 8px; overflow: hidden; }
        .now img { display: block; width: 100%; height: auto; }
        .status { color: var(--muted); text-align: center; }
        .drive { display: flex; gap: 12px; justify-content: center; }
        .drive form { flex: 1; }
        .drive button { width: 100%; min-height: 56px; font-size: 1.2rem; }
        .more { display: flex; gap: 12px; justify-content: center; margin-top: 12px; flex-wrap: wrap; }
        .brightness { display: flex; gap: 8px; align-items: center; margin-top: 12px; }
        .brightness input { flex: 1; min-height: 44px; }
        .login, .upload { display: flex; flex-direction: column; gap: 10px; }
        input[type="password"] { padding: 0 12px; border: 1px solid var(--line); border-radius: 8px; background: var(--card);
          color: var(--fg); }
        .problem { color: var(--bad); }
        .added { color: var(--good); }
        .results, .progress, .album { list-style: none; padding: 0; }
        .album li { padding: 8px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; display: flex;
          align-items: center; gap: 8px; justify-content: space-between; }
        .album li span { min-width: 0; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
        .grid li { flex-direction: column; align-items: stretch; border: 1px solid var(--line); border-radius: 8px;
          padding: 6px; background: var(--card); font-size: 0.85rem; }
        .grid img { width: 100%; height: auto; aspect-ratio: 1; border-radius: 4px; background: var(--line); object-fit: cover; }
        .guests { margin-bottom: 16px; }
        .notice strong { font-size: 1.3rem; letter-spacing: 0.1em; }
        .progress li { margin: 6px 0; overflow-wrap: anywhere; }
        progress { width: 100%; height: 12px; }
        pre { background: var(--card); padding: 10px; border-radius: 8px; overflow-x: auto; }
        code { overflow-wrap: anywhere; }
        .status-table { display: grid; grid-template-columns: max-content 1fr; gap: 8px 12px; }
        .status-table dt { font-weight: 600; }
        .status-table dd { margin: 0; overflow-wrap: anywhere; }
        .lead { color: var(--muted); }
        details.section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; }
        details.section summary { padding: 12px; min-height: 48px; cursor: pointer; font-weight: 600; }
        details.section summary span { display: block; font-weight: normal; color: var(--muted); font-size: 0.9rem; }
        .key { padding: 10px 12px; border-top: 1px solid var(--line); }
        .key h3 { margin: 0; font-size: 1rem; }
        .key .help, .key .accepts { margin: 4px 0; font-size: 0.9rem; }
        .key .accepts { color: var(--muted); }
        .setting, .reset { display: flex; gap: 8px; margin-top: 6px; }
        .setting input, .setting select { flex: 1; min-width: 0; min-height: 48px; font: inherit; padding: 0 10px;
          border: 1px solid var(--line); border-radius: 8px; background: var(--bg); color: var(--fg); }
        """

    /// Progressive: every form works without it. With it, drive buttons
    /// act without leaving the page (the picture is fetched again), and an
    /// upload sends one file per request with a progress bar for each.
    static let script = """
        "use strict";
        (function () {
          // The live view: the server says when the frame changed, and the
          // picture is fetched again then (never polled).
          var img = document.getElementById("now");
          var statusLine = document.getElementById("status");
          var playPause = document.getElementById("playpause");
          var live = null;
          function showState(s) {
            statusLine.textContent = s.count === 0 ? "The album is empty."
              : "Picture " + (s.index + 1) + " of " + s.count + (s.playing ? "" : " · paused");
            if (playPause) {
              playPause.action = s.playing ? "/drive/pause" : "/drive/play";
              playPause.querySelector("button").textContent = s.playing ? "Pause" : "Play";
            }
            // The page came with the picture of its generation: fetched again only after a change.
            if (String(s.generation) !== img.dataset.generation) {
              img.dataset.generation = String(s.generation);
              img.src = "/now.png?g=" + s.generation;
            }
          }
          if (img && window.WebSocket) {
            live = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
            live.onmessage = function (event) { showState(JSON.parse(event.data)); };
            live.onclose = function () { live = null; };
          }
          document.querySelectorAll(".drive form").forEach(function (form) {
            form.addEventListener("submit", function (event) {
              event.preventDefault();
              fetch(form.action, { method: "POST", headers: { "Accept": "application/json" }, credentials: "same-origin" })
                .then(function () { if (!live) { location.reload(); } }, function () { location.reload(); });
            });
          });
          var upload = document.getElementById("upload");
          if (!upload) { return; }
          upload.addEventListener("submit", function (event) {
            var input = document.getElementById("files");
            if (!input.files || input.files.length === 0) { return; }
            event.preventDefault();
            var list = document.getElementById("progress");
            var files = Array.prototype.slice.call(input.files);
            var rows = files.map(function (file) {
              var li = document.createElement("li");
              var label = document.createElement("div");
              label.textContent = file.name;
              var bar = document.createElement("progress");
              bar.max = file.size || 1;
              bar.value = 0;
              li.appendChild(label);
              li.appendChild(bar);
              list.appendChild(li);
              return { file: file, li: li, label: label, bar: bar };
            });
            var next = 0;
            function send() {
              if (next >= rows.length) { setTimeout(function () { location.reload(); }, 400); return; }
              var row = rows[next++];
              var body = new FormData();
              body.append("files", row.file, row.file.name);
              var xhr = new XMLHttpRequest();
              xhr.open("POST", "/photos");
              xhr.setRequestHeader("Accept", "application/json");
              xhr.upload.onprogress = function (e) { if (e.lengthComputable) { row.bar.max = e.total; row.bar.value = e.loaded; } };
              xhr.onload = function () {
                var text = "";
                try {
                  var answer = JSON.parse(xhr.responseText).files[0];
                  text = answer.ok ? "Added " + answer.name : answer.error;
                  row.li.className = answer.ok ? "added" : "problem";
                } catch (e) {
                  text = row.file.name + ": " + (xhr.responseText || xhr.statusText);
                  row.li.className = "problem";
                }
                row.label.textContent = text;
                row.bar.value = row.bar.max;
                send();
              };
              xhr.onerror = function () { row.label.textContent = row.file.name + ": the upload failed"; row.li.className = "problem"; send(); };
              xhr.send(body);
            }
            send();
          });
        })();
        """
}
