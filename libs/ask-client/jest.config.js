module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-client',
  rootDir: __dirname,
};
