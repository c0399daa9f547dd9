module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'token-counting',
  rootDir: __dirname,
};
