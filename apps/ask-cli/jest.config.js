module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-cli',
  rootDir: __dirname,
};
