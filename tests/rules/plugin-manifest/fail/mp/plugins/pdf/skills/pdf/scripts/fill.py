print('fill')
