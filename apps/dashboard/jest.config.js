const path = require('node:path');
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  // marked ships ES modules only (its package `exports`), which jest's CommonJS run cannot load; its
  // UMD build is the same code (vite bundles the ES build for the page).
  moduleNameMapper: {
    ...preset.moduleNameMapper,
    '^marked$': path.join(__dirname, '..', '..', 'node_modules', 'marked', 'lib', 'marked.umd.js'),
  },
  displayName: 'dashboard',
  rootDir: __dirname,
  // The browser specs start the three apps as processes and drive Debian's Chromium.
  // 180 s per test, set in a setup file: `testTimeout` is not a project option (jest warns "Unknown
  // option" when the root config runs this one as a project).
  setupFilesAfterEnv: ['<rootDir>/jest.setup.js'],
};
