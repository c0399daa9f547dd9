module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'dashboard',
  rootDir: __dirname,
  // The browser specs start the three apps as processes and drive Debian's Chromium.
  testTimeout: 180_000,
};
