module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'synthesis-worker',
  rootDir: __dirname,
};
