module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-e2e',
  rootDir: __dirname,
};
