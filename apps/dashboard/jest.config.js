module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'dashboard',
  rootDir: __dirname,
  // The browser specs start the three apps as processes and drive Debian's Chromium.
  // 180 s per test, set in a setup file: `testTimeout` is not a project option (jest warns "Unknown
  // option" when the root config runs this one as a project).
  setupFilesAfterEnv: ['<rootDir>/jest.setup.js'],
};
