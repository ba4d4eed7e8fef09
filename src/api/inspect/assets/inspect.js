// The inspector's one script (served from /inspect/assets, allowed by the page's CSP).
// It only fetches fragments of this origin, which the server rendered and escaped: the
// browser resends the page's own credentials, and no key is ever in the page.
'use strict';

async function fetchFragment(url) {
  const res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } });
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
  const template = document.createElement('template');
  template.innerHTML = await res.text();
  return template.content;
}

function showError(slot, error) {
  const p = document.createElement('p');
  p.className = 'error-box';
  p.setAttribute('role', 'alert');
  p.textContent = `Could not load: ${error.message}`;
  slot.replaceChildren(p);
}

// A batch opened for the first time loads its originals (the first page) into its slot.
document.addEventListener(
  'toggle',
  (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open || !details.dataset.originals || details.dataset.loaded) return;
    details.dataset.loaded = '1';
    const slot = details.querySelector('.originals-slot');
    slot.setAttribute('aria-busy', 'true');
    fetchFragment(details.dataset.originals)
      .then((fragment) => slot.replaceChildren(fragment))
      .catch((error) => showError(slot, error))
      .finally(() => slot.removeAttribute('aria-busy'));
  },
  true,
);

// "More originals" appends the next page in place instead of leaving the page.
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-fragment-more]') : null;
  if (!link) return;
  event.preventDefault();
  const holder = link.closest('p');
  fetchFragment(link.getAttribute('href'))
    .then((fragment) => holder.replaceWith(fragment))
    .catch((error) => showError(holder, error));
});

// A running job's page refreshes its live part every second until the job is terminal.
function pollJob(section) {
  const live = section.querySelector('#job-live');
  if (!live || live.dataset.active !== '1') return;
  setTimeout(() => {
    fetchFragment(section.dataset.live)
      .then((fragment) => {
        section.replaceChildren(fragment);
        pollJob(section);
      })
      .catch(() => setTimeout(() => pollJob(section), 3000));
  }, 1000);
}

document.addEventListener('DOMContentLoaded', () => {
  for (const section of document.querySelectorAll('[data-live]')) pollJob(section);
});
