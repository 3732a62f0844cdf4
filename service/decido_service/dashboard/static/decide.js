// The decide form: a chosen file is read into the options box, so what is sent is shown
// (and kept when the form comes back with a message); "Use the example" fills the boxes
// with the example greyed in them (their data-example), keeping the rest of the form.
(function () {
  "use strict";
  var file = document.getElementById("options_file");
  var box = document.getElementById("options");
  if (!file || !box) return;
  file.addEventListener("change", function () {
    if (!file.files.length) return;
    file.files[0].text().then(function (text) { box.value = text; });
  });
  var example = document.getElementById("use-example");
  if (!example) return;
  example.addEventListener("click", function (event) {
    event.preventDefault();
    document.querySelectorAll("#decide-form [data-example]").forEach(function (field) {
      field.value = field.getAttribute("data-example");
    });
    box.focus();
  });
})();
